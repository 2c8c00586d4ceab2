package sipredirect

import (
	"net"
	"testing"

	"github.com/emiago/sipgo/sip"
	"github.com/lnpdb/lnpdb/lrn"
)

// FuzzRespond feeds the server whatever sipgo parses from arbitrary bytes:
// it never panics, answers every request with a final status, and the
// Contact of every 302 it makes from a dip holds the dip's result, which
// lrn reads back.
func FuzzRespond(f *testing.F) {
	s, db, _ := sampleServer(f)
	for _, ruri := range []string{
		"sip:+12014814567@example.net",
		"sip:12052890123@10.0.0.1:5080;user=phone",
		"sip:2025550100@example.net",
		"tel:+12014814567;isub=12",
		"sip:+12014814567;npdi;rn=+12025550000@example.net",
		"sip:+12012000000@example.net",
		"sip:example.net",
	} {
		f.Add([]byte(invite("INVITE", ruri, "127.0.0.1:5099", 1)))
	}
	f.Add([]byte(invite("OPTIONS", "sip:example.net", "127.0.0.1:5099", 2)))
	f.Add([]byte(invite("BYE", "sip:+12014814567@example.net", "127.0.0.1:5099", 3)))
	for _, ruri := range hostileURIs {
		f.Add([]byte(invite("INVITE", ruri, "127.0.0.1:5099", 4)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := sip.ParseMessage(b)
		if err != nil {
			return
		}
		req, ok := m.(*sip.Request)
		if !ok || req.Via() == nil || req.CSeq() == nil {
			return // the transaction layer drops these before any handler
		}
		res := s.Respond(req)
		if res.StatusCode < 200 || res.StatusCode > 699 {
			t.Fatalf("status %d", res.StatusCode)
		}
		if len(res.GetHeaders("Contact")) > 1 {
			t.Fatalf("%d Contacts", len(res.GetHeaders("Contact")))
		}
		if c := res.Contact(); c != nil {
			if c.Address.Headers.Length() > 0 || c.Address.Password != "" {
				t.Fatalf("Contact %s carries headers or a password", c.Address.String())
			}
			var u sip.Uri
			if err := sip.ParseUri(c.Address.String(), &u); err != nil || u.Headers.Length() > 0 {
				t.Fatalf("Contact %s as sent: %v", c.Address.String(), err)
			}
		}
		if res.StatusCode != 302 {
			return
		}
		h := res.Contact()
		if h == nil {
			t.Fatal("302 without Contact")
		}
		ct, why := parseTarget(&h.Address)
		if why != nil {
			t.Fatalf("Contact %s: %s", h.Address.String(), why.text)
		}
		if !ct.npdi() {
			t.Fatalf("Contact %s has no npdi", h.Address.String())
		}
		rt, why := parseTarget(&req.Recipient)
		if why != nil {
			t.Fatalf("302 for a request URI refused: %s", why.text)
		}
		if rt.npdi() {
			return // redirected to itself
		}
		tel, err := lrn.ParseTelURI(ct.telURI())
		if err != nil {
			t.Fatalf("Contact %s: %+v %v", h.Address.String(), tel, err)
		}
		if asked, err := lrn.ParseTelURI(rt.telURI()); err == nil {
			r, err := lrn.Lookup(db, asked.Number, lrn.Options{})
			if err != nil || r.TelURI() != tel {
				t.Fatalf("Contact %s for %s, lookup %+v %v", h.Address.String(), asked.Number, r.TelURI(), err)
			}
		}
		// Re-parse the Contact as sent: what a switch reads must be what
		// was meant.
		var u sip.Uri
		if err := sip.ParseUri(h.Address.String(), &u); err != nil {
			t.Fatalf("Contact %s does not parse: %v", h.Address.String(), err)
		}
	})
}

// FuzzAnswerDatagram: the UDP path, from raw bytes to the response sent,
// never panics, and what it sends parses as a SIP response with at most one
// Contact, a sip, sips or tel URI without headers.
func FuzzAnswerDatagram(f *testing.F) {
	s, _, _ := sampleServer(f)
	f.Add([]byte(invite("INVITE", "sip:+12014814567@example.net", "127.0.0.1:5099", 1)))
	f.Add([]byte(invite("OPTIONS", "sip:example.net", "127.0.0.1:5099", 2)))
	f.Add([]byte("\r\n\r\n"))
	for _, ruri := range hostileURIs {
		f.Add([]byte(invite("INVITE", ruri, "127.0.0.1:5099", 4)))
	}
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5099}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := s.answerDatagram(make([]byte, 0, 1024), b, from)
		if !ok {
			return
		}
		m, err := sip.ParseMessage(out)
		if err != nil {
			t.Fatalf("sent %q: %v", out, err)
		}
		if _, ok := m.(*sip.Response); !ok {
			t.Fatalf("sent a request: %q", out)
		}
		requireOneSafeContact(t, out)
	})
}
