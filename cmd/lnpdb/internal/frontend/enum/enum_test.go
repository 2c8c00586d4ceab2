package enum

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enumName returns the ENUM domain of an 11-digit number under suffix.
func enumName(number, suffix string) string {
	var b strings.Builder
	for i := len(number) - 1; i >= 0; i-- {
		b.WriteByte(number[i])
		b.WriteByte('.')
	}
	return b.String() + suffix
}

// sampleHandler returns a handler that serves the sample table, the table,
// and its numbers of every kind.
func sampleHandler(t testing.TB) (*Handler, *format.DB, diptest.Numbers) {
	t.Helper()
	return diptest.Sample(t, func(tables diptest.FixedTables) (*Handler, error) { return New(Config{Tables: tables}) })
}

// query is the NAPTR question for number under e164.arpa.
func query(number string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(enumName(number, "e164.arpa."), dns.TypeNAPTR)
	return m
}

// serve starts h on loopback UDP and TCP and returns their addresses.
func serve(t *testing.T, h *Handler) (udp, tcp string) {
	t.Helper()
	return serveWith(t, h, ServerConfig{})
}

func serveWith(t *testing.T, h *Handler, cfg ServerConfig) (udp, tcp string) {
	t.Helper()
	s := NewServer(h, cfg)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 2)
	go func() { done <- s.ServeUDP(pc) }()
	go func() { done <- s.ServeTCP(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
		for range 2 {
			assert.ErrorIs(t, <-done, ErrServerClosed)
		}
	})
	return pc.LocalAddr().String(), l.Addr().String()
}

func exchange(t *testing.T, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 2 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	var err error
	for try := 0; try < 3; try++ { // UDP: retry on loss
		var r *dns.Msg
		if r, _, err = c.Exchange(m, addr); err == nil {
			return r
		}
	}
	require.NoError(t, err)
	return nil
}

// TestAnswers asks every kind of number over UDP and TCP and checks the
// answer against lrn.Lookup.
func TestAnswers(t *testing.T) {
	h, db, nums := sampleHandler(t)
	udp, tcp := serve(t, h)
	for _, net := range []struct{ name, addr string }{{"udp", udp}, {"tcp", tcp}} {
		for _, k := range nums.All() {
			t.Run(net.name+"/"+k[0], func(t *testing.T) {
				resp := exchange(t, net.name, net.addr, enumName(k[1], "e164.arpa."), dns.TypeNAPTR)
				assert.True(t, resp.Authoritative)
				r, err := lrn.Lookup(db, k[1], lrn.Options{})
				if err != nil {
					assert.True(t, errors.Is(err, lrn.ErrNotFound) || errors.Is(err, lrn.ErrInvalidNumber))
					assert.Equal(t, dns.RcodeNameError, resp.Rcode)
					require.Len(t, resp.Ns, 1)
					assert.Equal(t, dns.TypeSOA, resp.Ns[0].Header().Rrtype)
					return
				}
				require.Equal(t, dns.RcodeSuccess, resp.Rcode)
				require.Len(t, resp.Answer, 1)
				n := resp.Answer[0].(*dns.NAPTR)
				assert.Equal(t, uint16(100), n.Order)
				assert.Equal(t, uint16(10), n.Preference)
				assert.Equal(t, "u", n.Flags)
				assert.Equal(t, "E2U+pstn:tel", n.Service)
				assert.Equal(t, ".", n.Replacement)
				assert.Equal(t, uint32(DefaultTTL), n.Hdr.Ttl)
				want := "!^.*$!tel:+" + k[1] + ";npdi"
				if r.LRN != k[1] {
					want += ";rn=+" + r.LRN
				}
				assert.Equal(t, want+"!", n.Regexp)
				// The tel URI reads back to the lookup through lrn's parser.
				tel, err := lrn.ParseTelURI(strings.TrimSuffix(strings.TrimPrefix(n.Regexp, "!^.*$!"), "!"))
				require.NoError(t, err)
				assert.Equal(t, r.TelURI(), tel)
			})
		}
	}
}

func TestZone(t *testing.T) {
	db := testdb.Sample(t)
	nums := diptest.Find(t, db)
	h, err := New(Config{Tables: diptest.Fixed(db), Suffix: "NPD.Example.", TTL: 5})
	require.NoError(t, err)
	assert.Equal(t, "npd.example.", h.Suffix())
	udp, _ := serve(t, h)

	resp := exchange(t, "udp", udp, enumName(nums.Ported, "npd.example."), dns.TypeNAPTR)
	require.Len(t, resp.Answer, 1, "custom suffix")
	assert.Equal(t, uint32(5), resp.Answer[0].Header().Ttl)

	resp = exchange(t, "udp", udp, strings.ToUpper(enumName(nums.Ported, "npd.example.")), dns.TypeNAPTR)
	require.Len(t, resp.Answer, 1, "names match in any case")

	resp = exchange(t, "udp", udp, enumName(nums.Ported, "e164.arpa."), dns.TypeNAPTR)
	assert.Equal(t, dns.RcodeRefused, resp.Rcode, "outside the zone")
	assert.False(t, resp.Authoritative)

	resp = exchange(t, "udp", udp, enumName(nums.Ported, "npd.example."), dns.TypeA)
	assert.Equal(t, dns.RcodeSuccess, resp.Rcode, "a number queried for another type: NODATA")
	assert.Empty(t, resp.Answer)
	require.Len(t, resp.Ns, 1)
	assert.Equal(t, uint32(5), resp.Ns[0].(*dns.SOA).Minttl)

	resp = exchange(t, "udp", udp, "2.0.2.1.npd.example.", dns.TypeNAPTR)
	assert.Equal(t, dns.RcodeSuccess, resp.Rcode, "a prefix of numbers: NODATA")
	assert.Empty(t, resp.Answer)

	for _, name := range []string{
		"4." + enumName(nums.Ported, "npd.example."),   // 12 digits
		enumName("44"+nums.Ported[1:], "npd.example."), // not +1
		"x." + enumName(nums.Ported[1:], "npd.example."),
		"32.1.npd.example.",
	} {
		resp = exchange(t, "udp", udp, name, dns.TypeNAPTR)
		assert.Equal(t, dns.RcodeNameError, resp.Rcode, name)
	}

	resp = exchange(t, "udp", udp, "npd.example.", dns.TypeSOA)
	require.Len(t, resp.Answer, 1)
	assert.Equal(t, uint32(testdb.BuiltAt.Unix()), resp.Answer[0].(*dns.SOA).Serial)

	_, err = New(Config{Tables: diptest.Fixed(db), Suffix: "bad..name"})
	assert.Error(t, err)
}

// TestEDNSAndTruncation: an EDNS0 query gets an OPT back; answers over UDP
// never exceed the client's buffer, and set TC when they would.
func TestEDNSAndTruncation(t *testing.T) {
	h, _, nums := sampleHandler(t)

	m := query(nums.Ported)
	m.SetEdns0(1232, false)
	resp := h.Answer(m, true)
	require.NotNil(t, resp.IsEdns0())
	require.Len(t, resp.Answer, 1)
	assert.False(t, resp.Truncated)

	// An answer forced past 512 bytes is cut to fit with TC set: the
	// truncation the handler applies to every UDP answer.
	m.Extra = nil
	resp = h.Answer(m, true)
	for i := 0; i < 10; i++ {
		resp.Answer = append(resp.Answer, dns.Copy(resp.Answer[0]))
		resp.Answer[i+1].(*dns.NAPTR).Preference = uint16(i)
	}
	resp.Truncate(dns.MinMsgSize)
	b, err := resp.Pack()
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), dns.MinMsgSize)
	assert.True(t, resp.Truncated)

	// A response sent to the server is never answered.
	r := new(dns.Msg)
	r.SetReply(m)
	assert.Nil(t, h.Answer(r, true))

	m2 := new(dns.Msg)
	m2.SetQuestion(enumName(nums.Ported, "e164.arpa."), dns.TypeNAPTR)
	m2.Opcode = dns.OpcodeNotify
	assert.Equal(t, dns.RcodeNotImplemented, h.Answer(m2, true).Rcode)
	m2.Opcode = dns.OpcodeQuery
	m2.Question = nil
	assert.Equal(t, dns.RcodeFormatError, h.Answer(m2, true).Rcode)
}

// TestLiveUpdate: an update applied to the served table changes the next
// answer, with no restart.
func TestLiveUpdate(t *testing.T) {
	h, db, nums := sampleHandler(t)
	m := query(nums.Home)
	assert.Equal(t, "!^.*$!tel:+"+nums.Home+";npdi!", h.Answer(m, false).Answer[0].(*dns.NAPTR).Regexp)

	ported, err := lrn.Lookup(db, nums.Ported, lrn.Options{})
	require.NoError(t, err)
	tn, _ := strconv.ParseUint(nums.Home[1:], 10, 64)
	newLRN, _ := strconv.ParseUint(ported.LRN[1:], 10, 64)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: tn, LRN: newLRN, SPID: ported.SPID}}))
	assert.Equal(t, "!^.*$!tel:+"+nums.Home+";npdi;rn=+"+ported.LRN+"!", h.Answer(m, false).Answer[0].(*dns.NAPTR).Regexp)
}

func TestNoTable(t *testing.T) {
	h, err := New(Config{Tables: diptest.Fixed(nil)})
	require.NoError(t, err)
	m := new(dns.Msg)
	m.SetQuestion(enumName("12025550123", "e164.arpa."), dns.TypeNAPTR)
	assert.Equal(t, dns.RcodeServerFailure, h.Answer(m, true).Rcode)
}

func TestAnswerAllocs(t *testing.T) {
	// Not a zero-alloc path (miekg/dns builds messages on the heap); this
	// bounds it so that a regression shows.
	h, _, nums := sampleHandler(t)
	m := query(nums.Ported)
	allocs := testing.AllocsPerRun(100, func() { h.Answer(m, true) })
	assert.LessOrEqual(t, allocs, 12.0)
}

// TestInZone: the suffix and names below it, and not a name that merely
// ends in the suffix's text or whose last dot before it is escaped.
func TestInZone(t *testing.T) {
	h, err := New(Config{Tables: diptest.Fixed(nil)})
	require.NoError(t, err)
	for name, want := range map[string]bool{
		"e164.arpa.":         true,
		"1.e164.arpa.":       true,
		"3.2.1.e164.arpa.":   true,
		`a\\.e164.arpa.`:     true, // label "a\" then e164.arpa.
		`a\.e164.arpa.`:      false,
		"xe164.arpa.":        false,
		"arpa.":              false,
		".e164.arpa.":        true, // as dns.IsSubDomain has it
		"e164.arpa.example.": false,
	} {
		assert.Equal(t, want, h.inZone(name), name)
		assert.Equal(t, dns.IsSubDomain(h.Suffix(), name), h.inZone(name), "as dns.IsSubDomain: %s", name)
	}
}
