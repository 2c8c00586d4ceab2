package kamailiopdb

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testServer returns a server of the sample table with the carriers of
// testdata/carriers.txt, the table, and its numbers of every kind.
func testServer(t *testing.T) (*Server, *format.DB, diptest.Numbers) {
	t.Helper()
	carriers, err := LoadCarriers("testdata/carriers.txt")
	require.NoError(t, err)
	return diptest.Sample(t, func(tables diptest.FixedTables) (*Server, error) {
		return New(Config{Tables: tables, Carriers: carriers})
	})
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	require.NoError(t, err, s)
	return b
}

func TestVectors(t *testing.T) {
	s, _, _ := testServer(t)
	f, err := os.Open("testdata/vectors.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		require.True(t, ok, line)
		q, a, ok := strings.Cut(rest, "->")
		require.True(t, ok, line)
		n++
		t.Run(name, func(t *testing.T) {
			got, answered := s.Answer(nil, unhex(t, q))
			if strings.TrimSpace(a) == "none" {
				assert.False(t, answered, "answered % x", got)
				return
			}
			require.True(t, answered)
			assert.Equal(t, hex.EncodeToString(unhex(t, a)), hex.EncodeToString(got))
		})
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, n, 10)
}

// TestAnswersMatchLookup checks every kind of number against lrn.Lookup and
// the carrier file, rather than against bytes written by hand.
func TestAnswersMatchLookup(t *testing.T) {
	s, db, nums := testServer(t)
	for i, k := range nums.All() {
		t.Run(k[0], func(t *testing.T) {
			q, err := AppendRequest(nil, uint16(i+100), k[1])
			require.NoError(t, err)
			a, ok := s.Answer(nil, q)
			require.True(t, ok)
			rep, err := ParseReply(a)
			require.NoError(t, err)
			assert.Equal(t, uint16(i+100), rep.ID)
			r, err := lrn.Lookup(db, k[1], lrn.Options{})
			switch {
			case errors.Is(err, lrn.ErrInvalidNumber):
				assert.Equal(t, uint8(CodeNotNumber), rep.Code)
			case errors.Is(err, lrn.ErrNotFound):
				assert.Equal(t, uint8(CodeNotFound), rep.Code)
			default:
				require.NoError(t, err)
				assert.Equal(t, uint8(CodeOK), rep.Code)
				assert.Equal(t, k[1], rep.Number)
				assert.Equal(t, s.cfg.Carriers.ID(r.SPID), rep.Carrier)
				assert.NotEqual(t, int16(OtherCarrier), rep.Carrier, "the sample's carriers are all in testdata/carriers.txt")
			}
		})
	}
}

func TestCarriers(t *testing.T) {
	c, err := ParseCarriers(strings.NewReader("# comment\n\nD001 6731\nD012 a532 083L # two SPIDs\nD012 0987\n"))
	require.NoError(t, err)
	assert.Equal(t, int16(1), c.ID("6731"))
	assert.Equal(t, int16(12), c.ID("A532"))
	assert.Equal(t, int16(12), c.ID("083L"))
	assert.Equal(t, int16(12), c.ID("0987"))
	assert.Equal(t, int16(OtherCarrier), c.ID("9999"))
	assert.Equal(t, int16(OtherCarrier), c.ID(""))
	assert.Equal(t, 4, c.Len())
	var none *Carriers
	assert.Equal(t, int16(OtherCarrier), none.ID("6731"))

	for _, bad := range []string{"D000 6731", "D1000 6731", "001 6731", "Dabc 6731", "D001", "D001 67311", "D001 6731\nD002 6731", "D001 67-1"} {
		_, err := ParseCarriers(strings.NewReader(bad))
		assert.Error(t, err, bad)
	}
	_, err = LoadCarriers("testdata/absent.txt")
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Read as every text input is (internal/core/lineio): CR line ends,
	// and a line past 1 MiB refused with its number.
	c, err = ParseCarriers(strings.NewReader("D001 6731\rD002 0987 #" + strings.Repeat("x", 100<<10) + "\r"))
	require.NoError(t, err)
	assert.Equal(t, int16(2), c.ID("0987"))
	_, err = ParseCarriers(strings.NewReader("D001 6731\n#" + strings.Repeat("x", 2<<20)))
	assert.EqualError(t, err, "line 2: line longer than 1048576 bytes")
}

func TestNoTableNoAnswer(t *testing.T) {
	s, err := New(Config{Tables: diptest.Fixed(nil)})
	require.NoError(t, err)
	q, err := AppendRequest(nil, 1, "12025550123")
	require.NoError(t, err)
	_, ok := s.Answer(nil, q)
	assert.False(t, ok, "no table: silence, so that another server answers")

	db := testdb.Sample(t)
	require.NoError(t, db.Close())
	s, err = New(Config{Tables: diptest.Fixed(db)})
	require.NoError(t, err)
	_, ok = s.Answer(nil, q)
	assert.False(t, ok, "closed table: silence")
}

func TestRequestRoundTrip(t *testing.T) {
	q, err := AppendRequest(nil, 0xbeef, "12025550123")
	require.NoError(t, err)
	req, err := ParseRequest(q)
	require.NoError(t, err)
	assert.Equal(t, Request{ID: 0xbeef, Number: []byte("12025550123")}, req)
	_, err = AppendRequest(nil, 1, strings.Repeat("1", 249))
	assert.Error(t, err)
	// A number too long to echo is answered NOT_NUMBER, never a truncated echo.
	long := Request{Number: []byte(strings.Repeat("1", 250))}
	rep, err := ParseReply(AppendReply(nil, long, CodeOK, 5))
	require.NoError(t, err)
	assert.Equal(t, uint8(CodeNotNumber), rep.Code)
}

func TestAnswerAllocs(t *testing.T) {
	s, _, nums := testServer(t)
	q, err := AppendRequest(nil, 1, nums.Ported)
	require.NoError(t, err)
	buf := make([]byte, 0, MaxPacket)
	allocs := testing.AllocsPerRun(100, func() { s.Answer(buf, q) })
	assert.Zero(t, allocs)
}

// TestServeUDP answers over loopback on IPv4 and IPv6, and shuts down.
func TestServeUDP(t *testing.T) {
	s, db, nums := testServer(t)
	want, err := lrn.Lookup(db, nums.Pooled, lrn.Options{})
	require.NoError(t, err)
	var served []chan error
	// IPv4, IPv6, and one dual-stack socket asked over IPv4.
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", ":0"} {
		conn, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Logf("skipping %s: %v", addr, err)
			continue
		}
		done := make(chan error, 1)
		served = append(served, done)
		go func() { done <- s.Serve(conn) }()

		dial := conn.LocalAddr().String()
		if addr == ":0" {
			dial = fmt.Sprintf("127.0.0.1:%d", conn.LocalAddr().(*net.UDPAddr).Port)
		}
		c, err := net.Dial("udp", dial)
		require.NoError(t, err)
		defer c.Close()
		q, err := AppendRequest(nil, 42, nums.Pooled)
		require.NoError(t, err)
		var rep Reply
		for try := 0; try < 5; try++ { // UDP: resend on loss
			_, err = c.Write(q)
			require.NoError(t, err)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
			buf := make([]byte, 512)
			n, rerr := c.Read(buf)
			if rerr != nil {
				continue
			}
			rep, err = ParseReply(buf[:n])
			require.NoError(t, err)
			break
		}
		assert.Equal(t, uint8(CodeOK), rep.Code, addr)
		assert.Equal(t, s.cfg.Carriers.ID(want.SPID), rep.Carrier, addr)
	}
	require.NotEmpty(t, served)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	for _, done := range served {
		assert.ErrorIs(t, <-done, ErrServerClosed)
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	assert.ErrorIs(t, s.Serve(conn), ErrServerClosed)
}

// TestLiveUpdate: a port applied to the served table changes the next
// answer's carrier, with no restart.
func TestLiveUpdate(t *testing.T) {
	s, db, nums := testServer(t)
	home, err := lrn.Lookup(db, nums.Home, lrn.Options{})
	require.NoError(t, err)
	q, err := AppendRequest(nil, 1, nums.Home)
	require.NoError(t, err)
	a, _ := s.Answer(nil, q)
	rep, err := ParseReply(a)
	require.NoError(t, err)
	require.Equal(t, s.cfg.Carriers.ID(home.SPID), rep.Carrier)

	// Port it to a carrier with another id.
	var to string
	for _, spid := range []string{"0987", "6731", "A532"} {
		if s.cfg.Carriers.ID(spid) != rep.Carrier {
			to = spid
			break
		}
	}
	tn, _ := strconv.ParseUint(nums.Home[1:], 10, 64)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: tn, LRN: tn, SPID: to}}))
	a, _ = s.Answer(nil, q)
	rep, err = ParseReply(a)
	require.NoError(t, err)
	assert.Equal(t, s.cfg.Carriers.ID(to), rep.Carrier)
}
