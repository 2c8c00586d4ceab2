package kamailiopdb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

// Carriers maps a number's current carrier, named by its SPID (the OCN of
// the ported record's new service provider, else of its code or
// thousands-block holder), to the carrier id a pdb reply carries.
//
// The file is pdbt's carrier-name format, one carrier id per line, with the
// carrier named by its SPIDs:
//
//	# id  SPIDs (whitespace-separated)
//	D001 6731
//	D012 0987 083L
//
// "D" and three digits 001–999, a space, then one or more 4-character
// SPIDs; '#' starts a comment, blank lines are skipped. Several lines may
// share an id (a carrier group with many SPIDs); a SPID may appear once.
// Every SPID not in the file answers [OtherCarrier] (1000, pdbt's "other
// carriers" group), as does a number whose carrier is unknown.
//
// The zero Carriers maps every SPID to OtherCarrier: without a file, a pdb
// query tells found numbers (1000) from vacant and invalid ones (not found)
// and nothing more.
type Carriers struct {
	bySPID map[string]int16
}

// LoadCarriers reads a carrier file (see [Carriers]).
func LoadCarriers(path string) (*Carriers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pdb carrier file: %w", err)
	}
	defer f.Close()
	c, err := ParseCarriers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCarriers reads carrier lines (see [Carriers]) from r.
func ParseCarriers(r io.Reader) (*Carriers, error) {
	c := &Carriers{bySPID: make(map[string]int16)}
	lr := lineio.NewReader(r)
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		line := lr.Line()
		if errors.Is(err, lineio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if err != nil {
			return nil, err
		}
		s, _, _ := strings.Cut(string(b), "#")
		fields := strings.Fields(s)
		if len(fields) == 0 {
			continue
		}
		id := fields[0]
		if len(id) != 4 || id[0] != 'D' || !IsDigits([]byte(id[1:])) {
			return nil, fmt.Errorf("line %d: carrier id %q: want D and three digits, as D012", line, id)
		}
		n, _ := strconv.Atoi(id[1:])
		if n < MinCarrier || n > MaxCarrier {
			return nil, fmt.Errorf("line %d: carrier id %s: must be D001 to D999", line, id)
		}
		if len(fields) == 1 {
			return nil, fmt.Errorf("line %d: carrier id %s names no SPID", line, id)
		}
		for _, spid := range fields[1:] {
			if !validSPID(spid) {
				return nil, fmt.Errorf("line %d: %q is not a SPID (4 letters or digits)", line, spid)
			}
			spid = strings.ToUpper(spid)
			if prev, dup := c.bySPID[spid]; dup {
				return nil, fmt.Errorf("line %d: SPID %s already mapped to D%03d", line, spid, prev)
			}
			c.bySPID[spid] = int16(n)
		}
	}
	return c, nil
}

func validSPID(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// ID returns the carrier id of spid: its mapped id, else OtherCarrier. A
// nil or zero Carriers maps everything to OtherCarrier.
func (c *Carriers) ID(spid string) int16 {
	if c != nil {
		if id, ok := c.bySPID[spid]; ok {
			return id
		}
	}
	return OtherCarrier
}

// Len returns how many SPIDs are mapped.
func (c *Carriers) Len() int {
	if c == nil {
		return 0
	}
	return len(c.bySPID)
}
