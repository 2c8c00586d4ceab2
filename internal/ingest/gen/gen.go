package gen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/lnpdb/lnpdb/internal/ingest/progress"
)

// Config says what to generate. The zero value of Codes and Carriers means
// "scaled to Ported"; the fractions are taken as given (0 writes a file with
// only its header).
type Config struct {
	// Seed selects the data: the same Config writes the same bytes.
	Seed int64
	// Ported is the number of rows of ported.csv.
	Ported int
	// Codes is the number of assigned NPA-NXX codes; 0 means
	// max(500, Ported/2000), capped at what the NPAs can hold.
	Codes int
	// Carriers is the number of carriers; 0 means Ported/300 and Codes/10,
	// whichever is larger, kept between 30 and 3,000.
	Carriers int
	// Messaging, CNAM and Trust are the share, 0 to 1, of listed numbers
	// that get a row in messaging.csv, cnam.csv and trust.csv. The listed
	// numbers are the ported ones and a third as many unported numbers in
	// service; wireless numbers get CNAM rows half as often.
	Messaging, CNAM, Trust float64
	// Progress, when a terminal, shows a progress bar; nil shows none.
	Progress io.Writer
}

// Shares the command line uses when not told otherwise.
const (
	DefaultMessaging = 0.25
	DefaultCNAM      = 0.2
	DefaultTrust     = 0.02
)

// Validate reports whether c can be generated.
func (c Config) Validate() error {
	switch {
	case c.Ported < 0:
		return fmt.Errorf("gen: ported %d is negative", c.Ported)
	case c.Codes < 0:
		return fmt.Errorf("gen: codes %d is negative", c.Codes)
	case c.Carriers < 0:
		return fmt.Errorf("gen: carriers %d is negative", c.Carriers)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"messaging", c.Messaging}, {"cnam", c.CNAM}, {"trust", c.Trust}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("gen: %s share %v is not between 0 and 1", f.name, f.v)
		}
	}
	return nil
}

// withDefaults fills in Codes and Carriers.
func (c Config) withDefaults(ref *reference) (Config, error) {
	capacity := len(ref.npas)*len(nxxPool) + 1
	if c.Codes == 0 {
		c.Codes = min(max(500, c.Ported/2000), capacity)
	}
	if c.Codes > capacity {
		return c, fmt.Errorf("gen: %d codes: the %d NPAs hold at most %d", c.Codes, len(ref.npas), capacity)
	}
	if c.Carriers == 0 {
		c.Carriers = clamp(max(c.Ported/300, c.Codes/10), 30, maxCarriers)
	}
	return c, nil
}

// Stats counts what Generate wrote: data rows per file (headers excluded)
// and bytes in all.
type Stats struct {
	Carriers    int64 // carriers.csv
	RateCenters int64 // ratecenters.csv
	Codes       int64 // whole-code rows of blocks.csv
	Blocks      int64 // all rows of blocks.csv: codes and thousands-blocks
	Ported      int64 // ported.csv
	Messaging   int64 // messaging.csv
	CNAM        int64 // cnam.csv
	Trust       int64 // trust.csv
	LRNs        int64 // distinct LRNs: one per carrier per (state, LATA) where it holds numbers
	Bytes       int64 // size of all files
}

// File names Generate writes, in DATA.md's shapes.
const (
	FileCarriers    = "carriers.csv"
	FileRateCenters = "ratecenters.csv"
	FileBlocks      = "blocks.csv"
	FilePorted      = "ported.csv"
	FileMessaging   = "messaging.csv"
	FileCNAM        = "cnam.csv"
	FileTrust       = "trust.csv"
)

// Generate writes a synthetic source directory into dir (created if
// needed): carriers.csv, ratecenters.csv, blocks.csv, ported.csv,
// messaging.csv, cnam.csv and trust.csv. It streams the per-number files, so
// memory stays bounded (tens of MB) whatever cfg.Ported is. Files are written
// under temporary names and renamed into place only when all are complete;
// on error or cancellation none is left behind.
func Generate(ctx context.Context, dir string, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	ref, err := loadReference()
	if err != nil {
		return Stats{}, err
	}
	if cfg, err = cfg.withDefaults(ref); err != nil {
		return Stats{}, err
	}
	w, err := buildWorld(cfg, ref)
	if err != nil {
		return Stats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stats{}, fmt.Errorf("gen: %w", err)
	}
	o := &output{dir: dir}
	defer o.abort()
	var st Stats
	if err := o.writeSmall(w, &st); err != nil {
		return Stats{}, err
	}
	if err := o.writeNumbers(ctx, w, cfg, &st); err != nil {
		return Stats{}, err
	}
	if err := o.commit(&st); err != nil {
		return Stats{}, err
	}
	return st, nil
}

// output holds the files being written.
type output struct {
	dir   string
	files []*csvFile
	done  bool
}

// csvFile is one file being written under a temporary name.
type csvFile struct {
	name string
	f    *os.File
	w    *bufio.Writer
	rows int64
}

func (o *output) create(name, header string) (*csvFile, error) {
	f, err := os.CreateTemp(o.dir, "."+name+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	c := &csvFile{name: name, f: f, w: bufio.NewWriterSize(f, 1<<20)}
	o.files = append(o.files, c)
	c.w.WriteString(header)
	c.w.WriteByte('\n')
	return c, nil
}

// buf returns an empty slice over the writer's free space: a row appended to
// it and passed to row is written without a copy.
func (c *csvFile) buf() []byte { return c.w.AvailableBuffer() }

func (c *csvFile) row(b []byte) {
	c.w.Write(b) // errors are sticky in bufio.Writer; commit reports them
	c.rows++
}

// commit flushes, closes and renames every file into place.
func (o *output) commit(st *Stats) error {
	for _, c := range o.files {
		if err := c.w.Flush(); err != nil {
			return fmt.Errorf("gen: writing %s: %w", c.name, err)
		}
		if err := c.f.Close(); err != nil {
			return fmt.Errorf("gen: writing %s: %w", c.name, err)
		}
	}
	for _, c := range o.files {
		// CreateTemp makes files private; source data is not.
		if err := os.Chmod(c.f.Name(), 0o644); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		if err := os.Rename(c.f.Name(), filepath.Join(o.dir, c.name)); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		fi, err := os.Stat(filepath.Join(o.dir, c.name))
		if err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		st.Bytes += fi.Size()
	}
	o.done = true
	return nil
}

// abort removes the temporary files of an unfinished output.
func (o *output) abort() {
	if o.done {
		return
	}
	for _, c := range o.files {
		c.f.Close()
		os.Remove(c.f.Name())
	}
}

// writeSmall writes the files that fit in memory: carriers, rate centers
// and blocks.
func (o *output) writeSmall(w *world, st *Stats) error {
	cf, err := o.create(FileCarriers, "ocn,name,carrier_type,messaging_provider,messaging_enabled")
	if err != nil {
		return err
	}
	for _, c := range w.carriers {
		b := cf.buf()
		b = append(b, c.ocn...)
		b = append(b, ',')
		b = appendField(b, c.name)
		b = append(b, ',')
		b = append(b, c.ctype...)
		b = append(b, ',')
		if c.provider != "" {
			b = append(b, c.provider...)
			b = append(b, ',')
			b = strconv.AppendBool(b, c.enabled)
		} else {
			b = append(b, ',')
		}
		cf.row(append(b, '\n'))
	}
	st.Carriers = cf.rows

	rf, err := o.create(FileRateCenters, "state,rate_center,lata,city,county,zip_code,timezone")
	if err != nil {
		return err
	}
	for _, p := range w.ref.places {
		b := rf.buf()
		for i, f := range []string{p.state, p.rateCenter, p.lata, p.city, p.county, p.zip, p.tz} {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendField(b, f)
		}
		rf.row(append(b, '\n'))
	}
	st.RateCenters = rf.rows

	bf, err := o.create(FileBlocks, "npa,nxx,x,ocn,state,rate_center,lrn,activated_at")
	if err != nil {
		return err
	}
	lrns := map[int64]bool{}
	r := newRNG(0, 2) // time formats only; the times themselves are in the world
	for _, c := range w.codes {
		p := w.ref.places[c.place]
		reg := &w.regions[c.region]
		bf.row(appendBlock(bf.buf(), &c, -1, w.carriers[c.holder].ocn, p, 0, 0, nil))
		st.Codes++
		if !c.split {
			continue
		}
		for x, o := range c.owner {
			if o < 0 {
				continue
			}
			var lrn int64
			if c.lrnPos[x] >= 0 {
				lrn = reg.lrns[c.lrnPos[x]]
				lrns[lrn] = true
			}
			bf.row(appendBlock(bf.buf(), &c, x, w.carriers[o].ocn, p, lrn, int64(c.blockAt[x]), &r))
		}
	}
	st.Blocks = bf.rows
	for _, reg := range w.regions {
		for _, l := range reg.lrns {
			lrns[l] = true
		}
	}
	st.LRNs = int64(len(lrns))
	return nil
}

func appendBlock(b []byte, c *code, x int, ocn string, p place, lrn, at int64, r *rng) []byte {
	b = strconv.AppendInt(b, int64(c.npa), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(c.nxx), 10)
	b = append(b, ',')
	if x >= 0 {
		b = append(b, byte('0'+x))
	}
	b = append(b, ',')
	b = append(b, ocn...)
	b = append(b, ',')
	b = append(b, p.state...)
	b = append(b, ',')
	b = appendField(b, p.rateCenter)
	b = append(b, ',')
	if lrn != 0 {
		b = strconv.AppendInt(b, lrn, 10)
		b = append(b, ',')
		b = appendTime(b, r, at)
	} else {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendField appends s as a CSV field, quoted when it must be.
func appendField(b []byte, s string) []byte {
	quote := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// writeNumbers streams ported.csv, messaging.csv, cnam.csv and trust.csv,
// code by code. Each code draws from its own random stream, so a code's rows
// depend only on the seed and the code.
func (o *output) writeNumbers(ctx context.Context, w *world, cfg Config, st *Stats) error {
	pf, err := o.create(FilePorted, "tn,lrn,spid,activated_at,sv_type")
	if err != nil {
		return err
	}
	mf, err := o.create(FileMessaging, "tn,provider,enabled,country,country_code,reference_id")
	if err != nil {
		return err
	}
	nf, err := o.create(FileCNAM, "tn,name")
	if err != nil {
		return err
	}
	tf, err := o.create(FileTrust, "tn,spam_type,complaint_count,first_reported,last_reported")
	if err != nil {
		return err
	}
	bar := progress.New(cfg.Progress, "gen", int64(cfg.Ported))
	defer bar.Done()
	lines := make([]uint16, 10000)
	for ci := range w.codes {
		if ci%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := &w.codes[ci]
		reg := &w.regions[c.region]
		r := newRNG(cfg.Seed, 1<<32+uint64(ci))
		// SV Types draw from a stream of their own, so that every other
		// value is what it was before ported.csv had the column.
		svr := newRNG(cfg.Seed, 2<<32+uint64(ci))
		var blocks [10]int
		if c.split {
			n := 0
			for x, o := range c.owner {
				if o >= 0 {
					blocks[n] = x
					n++
				}
			}
		}
		k, total := int(c.ported), int(c.lines)
		listed := min(k+k/unportedListed+r.intn(3), total)
		pool := lines[:total]
		for i := range pool {
			pool[i] = uint16(i)
		}
		base := int64(c.npa)*10_000_000 + int64(c.nxx)*10_000
		for i := range listed {
			// A partial Fisher–Yates shuffle: distinct lines, no set needed.
			j := i + r.intn(total-i)
			if i == 0 && c.npa == sampleNPA && c.nxx == sampleNXX && (!c.split || c.owner[0] >= 0) {
				j = sampleLine // 202-555-0123, the docs' example, is listed (and ported)
			}
			pool[i], pool[j] = pool[j], pool[i]
			v := int(pool[i])
			owner := c.holder
			line := v
			if c.split {
				x := blocks[v/1000]
				line = x*1000 + v%1000
				owner = c.owner[x]
			}
			tn := base + int64(line)
			current := owner
			if i < k {
				p := r.pick(reg.cum)
				for try := 0; try < 3 && reg.carriers[p] == owner; try++ {
					p = r.pick(reg.cum)
				}
				current = reg.carriers[p]
				b := pf.buf()
				b = strconv.AppendInt(b, tn, 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, reg.lrns[p], 10)
				b = append(b, ',')
				b = append(b, w.carriers[current].ocn...)
				b = append(b, ',')
				from := portingStart
				if w.carriers[current].wireless {
					from = wirelessLNPStart
				}
				b = appendTime(b, &r, activation(&r, from, 0.02))
				b = append(b, ',')
				b = append(b, svType(&svr, w.carriers[current].ctype)...)
				pf.row(append(b, '\n'))
			}
			if cfg.Messaging > 0 && r.chance(cfg.Messaging) {
				b := mf.buf()
				b = append(b, '1')
				b = strconv.AppendInt(b, tn, 10)
				b = append(b, ',')
				b = append(b, messagingProviders[r.intn(len(messagingProviders))]...)
				if r.chance(0.85) {
					b = append(b, ",true,US,1,"...)
				} else {
					b = append(b, ",false,US,1,"...)
				}
				b = append(b, w.refIDs[r.intn(len(w.refIDs))]...)
				mf.row(append(b, '\n'))
			}
			if p := cfg.CNAM; p > 0 {
				if w.carriers[current].wireless {
					p /= 2
				}
				if r.chance(p) {
					b := nf.buf()
					b = strconv.AppendInt(b, tn, 10)
					b = append(b, ',')
					b = appendCNAM(b, &r)
					nf.row(append(b, '\n'))
				}
			}
			if cfg.Trust > 0 && r.chance(cfg.Trust) {
				tf.row(appendTrust(tf.buf(), &r, tn))
			}
		}
		bar.Add(int64(k))
	}
	st.Ported, st.Messaging, st.CNAM, st.Trust = pf.rows, mf.rows, nf.rows, tf.rows
	return nil
}

// appendTrust appends a complaint record: a spam type, a complaint count
// (log-skewed: most numbers have a few, some thousands) and the first and
// last report, first ≤ last.
func appendTrust(b []byte, r *rng, tn int64) []byte {
	b = strconv.AppendInt(b, tn, 10)
	b = append(b, ',')
	st := r.pick(spamTypeWeights)
	b = append(b, spamTypes[st]...)
	b = append(b, ',')
	var n int
	if st == 0 {
		n = r.intn(3)
	} else {
		u := r.float()
		n = int(math.Exp(u * u * math.Log(5000)))
	}
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ',')
	first := complaintsStart + int64(r.intn(int(nowUnix-complaintsStart-day)))
	last := first + int64(r.float()*float64(nowUnix-1-first))
	if n <= 1 && r.chance(0.5) {
		last = first
	}
	b = appendRFC3339(b, first, 0, true)
	b = append(b, ',')
	b = appendRFC3339(b, last, 0, true)
	return append(b, '\n')
}
