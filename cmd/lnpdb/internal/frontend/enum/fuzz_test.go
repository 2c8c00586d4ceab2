package enum

import (
	"strings"
	"testing"

	"github.com/lnpdb/lnpdb/lrn"
	"github.com/miekg/dns"
)

// FuzzAnswer feeds the handler whatever miekg/dns decodes from arbitrary
// bytes: it never panics, always answers something that packs, within the
// client's UDP buffer, and every NAPTR it writes holds a tel URI that lrn
// reads back.
func FuzzAnswer(f *testing.F) {
	h, _, _ := sampleHandler(f)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"7.6.5.4.1.8.4.1.0.2.1.e164.arpa.", dns.TypeNAPTR},
		{"3.2.1.0.5.5.5.2.0.2.1.e164.arpa.", dns.TypeANY},
		{"0.0.0.0.0.0.2.1.0.2.1.e164.arpa.", dns.TypeNAPTR},
		{"e164.arpa.", dns.TypeSOA},
		{"example.com.", dns.TypeA},
		{`3.2.1\.e164.arpa.`, dns.TypeNAPTR},
		{`3.2.1\\.e164.arpa.`, dns.TypeNAPTR},
		{"xe164.arpa.", dns.TypeNAPTR},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		b, _ := m.Pack()
		f.Add(b)
		m.SetEdns0(4096, true)
		b, _ = m.Pack()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The wire path the UDP server takes.
		if out, ok := h.AnswerWire(make([]byte, 0, 512), b); ok {
			if err := new(dns.Msg).Unpack(out); err != nil {
				t.Fatalf("wire answer does not unpack: %v", err)
			}
		}
		req := new(dns.Msg)
		if req.Unpack(b) != nil {
			return
		}
		for _, q := range req.Question {
			name := dns.CanonicalName(q.Name)
			if got, want := h.inZone(name), dns.IsSubDomain(h.Suffix(), name); got != want {
				t.Fatalf("inZone(%q) = %v, dns.IsSubDomain says %v", name, got, want)
			}
		}
		resp := h.Answer(req, true)
		if resp == nil {
			if !req.Response {
				t.Fatal("no answer to a query")
			}
			return
		}
		out, err := resp.Pack()
		if err != nil {
			t.Fatalf("answer does not pack: %v\n%v", err, resp)
		}
		limit := dns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			limit = max(limit, int(opt.UDPSize()))
		}
		if len(out) > limit {
			t.Fatalf("UDP answer of %d bytes, limit %d", len(out), limit)
		}
		for _, rr := range resp.Answer {
			if n, ok := rr.(*dns.NAPTR); ok {
				uri := strings.TrimSuffix(strings.TrimPrefix(n.Regexp, "!^.*$!"), "!")
				if _, err := lrn.ParseTelURI(uri); err != nil {
					t.Fatalf("NAPTR regexp %q: %v", n.Regexp, err)
				}
			}
		}
	})
}
