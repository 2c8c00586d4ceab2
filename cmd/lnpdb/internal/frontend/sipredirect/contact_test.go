package sipredirect

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileURIs are request URIs a caller may write to make a redirect name
// more, or other, than the number's route: a second Contact, URI headers,
// a maddr, quotes, angle brackets and NULs.
var hostileURIs = []string{
	"sip:+12025550123@evil.example>;foo,<sip:attacker@evil",
	"sip:+12025550123@example.net?Route=%3Csip:attacker@evil.example%3E",
	"sip:+12025550123@example.net;maddr=evil.example;lr;transport=tcp",
	`sip:+12025550123;x="<>"@example.net`,
	"sip:+12025550123;isub=12\x00x@example.net",
	"sip:+12025550123\x00@example.net",
	"sip:+12025550123@exa\x00mple.net",
	"sip:+12025550123;npdi=yes;rn=+1202\"<sip:x@evil>@example.net",
	"sip:+12025550123;npdi=yes;rn=bogus@example.net>,<sip:attacker@evil",
	"sip:+12025550123:secret@example.net",
	"tel:+12025550123;x=<sip:attacker@evil>",
	"tel:+12025550123;npdi;rn=+12025550000,<sip:attacker@evil>",
	"sip:+12025550123@[::1%25eth0]",
	"sip:+12025550123@-evil-.example",
}

// requireOneSafeContact checks a response as sent: at most one Contact
// header, naming one URI, sip, sips or tel, with no headers and no
// parameters but those a Contact keeps.
func requireOneSafeContact(t testing.TB, wire []byte) {
	m, err := sip.ParseMessage(wire)
	if err != nil {
		t.Fatalf("sent %q: %v", wire, err)
	}
	n := 0
	for _, line := range strings.Split(string(wire), "\r\n") {
		name, _, _ := strings.Cut(line, ":")
		if n := strings.ToLower(strings.TrimSpace(name)); n == "contact" || n == "m" {
			if strings.ContainsAny(line, ",\x00\"") || strings.Count(line, "<") != 1 || strings.Count(line, ">") != 1 {
				t.Fatalf("Contact line %q", line)
			}
		}
	}
	for _, h := range m.GetHeaders("Contact") {
		n++
		c, ok := h.(*sip.ContactHeader)
		if !ok {
			t.Fatalf("Contact %q not parsed as a Contact", h.Value())
		}
		u := c.Address
		switch u.Scheme {
		case "sip", "sips", "tel":
		default:
			t.Fatalf("Contact %s: scheme %q", u.String(), u.Scheme)
		}
		if u.Headers.Length() > 0 || u.Password != "" || c.Params.Length() > 0 {
			t.Fatalf("Contact %s carries headers, a password or header parameters", u.String())
		}
		for _, k := range u.UriParams.Keys() {
			if !uriParams[k] {
				t.Fatalf("Contact %s carries URI parameter %q", u.String(), k)
			}
		}
		if _, why := parseTarget(&u); why != nil {
			t.Fatalf("Contact %s does not read back: %s", u.String(), why.text)
		}
	}
	if n > 1 {
		t.Fatalf("%d Contacts in %q", n, wire)
	}
}

// TestHostileRequestURIs: whatever a request URI holds, the answer has at
// most one Contact, built from checked parts only; what cannot be kept is
// refused with a Reason, or left out.
func TestHostileRequestURIs(t *testing.T) {
	s, _, _ := sampleServer(t)
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5099}
	for _, ruri := range hostileURIs {
		t.Run(strings.ToValidUTF8(ruri, "?"), func(t *testing.T) {
			out, ok := s.answerDatagram(nil, []byte(invite("INVITE", ruri, from.String(), 1)), from)
			if !ok {
				return // did not parse: dropped
			}
			requireOneSafeContact(t, out)
			// The To header echoes the request's, as it must (RFC 3261
			// §8.2.6.2); the Contact is what a switch routes to.
			c := contactLine(out)
			for _, bad := range []string{"attacker", "evil", "Route", "maddr", "secret", "\x00", "\"", "<>"} {
				assert.NotContains(t, strings.Trim(strconv.Quote(c), `"`), bad, c)
			}
			t.Logf("%q -> %s", ruri, firstLine(out)+" "+contactLine(out))
		})
	}
}

func firstLine(b []byte) string {
	l, _, _ := strings.Cut(string(b), "\r\n")
	return l
}

func contactLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\r\n") {
		if strings.HasPrefix(strings.ToLower(l), "contact:") {
			return l
		}
	}
	return ""
}

// TestContactKeeps: what a Contact keeps of a request URI, and what it
// answers when npdi is present: a redirect to itself, rn as it came,
// whether or not it is a NANP number (RFC 4694 §4: the dip was done).
func TestContactKeeps(t *testing.T) {
	s, _, nums := sampleServer(t)
	req := func(ruri string) *sip.Request {
		m, err := sip.ParseMessage([]byte(invite("INVITE", ruri, "127.0.0.1:5099", 1)))
		require.NoError(t, err)
		return m.(*sip.Request)
	}
	n := "+" + nums.Home
	for _, c := range []struct{ ruri, code, contact string }{
		{"sip:" + n + ";isub=12;foo=bar@Example.NET:5080;user=phone;lr;maddr=x.example", "302", "sip:" + n + ";isub=12;npdi@Example.NET:5080;user=phone"},
		{"sips:" + n + "@192.0.2.1", "302", "sips:" + n + ";npdi@192.0.2.1"},
		{"sip:" + n + "@[2001:db8::1]:5061;transport=tls", "302", "sip:" + n + ";npdi@[2001:db8::1]:5061;transport=tls"},
		{"tel:" + n + ";ext=7;bogus", "302", "tel:" + n + ";ext=7;npdi"},
		{"sip:" + n + ";npdi=yes;rn=+1202@example.net", "302", "sip:" + n + ";npdi=yes;rn=+1202@example.net"},
		{"sip:" + n + ";npdi=yes;rn=1234;rn-context=+1@example.net;lr", "302", "sip:" + n + ";npdi=yes;rn=1234;rn-context=+1@example.net"},
		{"tel:+44-20-7946-0000;npdi", "302", "tel:+44-20-7946-0000;npdi"},
		{"sip:" + n + "@exa_mple.net", "400", ""},
		{"sip:" + n + ";npdi=yes;rn=%3C@example.net", "484", ""},
		{"sip:alice@example.net", "484", ""},
	} {
		res := s.Respond(req(c.ruri))
		assert.Equal(t, c.code, strconv.Itoa(res.StatusCode), c.ruri)
		if c.contact != "" {
			assert.Equal(t, c.contact, contactOf(t, res), c.ruri)
		} else {
			assert.Nil(t, res.Contact(), c.ruri)
			assert.NotNil(t, res.GetHeader("Reason"), c.ruri)
		}
		var b bytes.Buffer
		res.StringWrite(&b)
		requireOneSafeContact(t, b.Bytes())
	}
}

// TestNPDIForm: a dipped Contact writes npdi bare, as RFC 4694 and the
// ENUM answers do, unless Config.NPDI asks for npdi=yes; a request's npdi
// is taken in either form as a dip already done.
func TestNPDIForm(t *testing.T) {
	db := testdb.Sample(t)
	nums := diptest.Find(t, db)
	r, err := lrn.Lookup(db, nums.Ported, lrn.Options{})
	require.NoError(t, err)
	req := func(ruri string) *sip.Request {
		m, err := sip.ParseMessage([]byte(invite("INVITE", ruri, "127.0.0.1:5099", 1)))
		require.NoError(t, err)
		return m.(*sip.Request)
	}
	n, rn := "+"+nums.Ported, ";rn=+"+r.LRN
	for _, c := range []struct {
		form NPDI
		npdi string
	}{{NPDIBare, ";npdi"}, {NPDIYes, ";npdi=yes"}} {
		s, err := New(Config{Tables: diptest.Fixed(db), NPDI: c.form})
		require.NoError(t, err)
		assert.Equal(t, "sip:"+n+c.npdi+rn+"@example.net", contactOf(t, s.Respond(req("sip:"+n+"@example.net"))), c.form)
		assert.Equal(t, "tel:"+n+c.npdi+rn, contactOf(t, s.Respond(req("tel:"+n))), c.form)
		for _, dipped := range []string{"sip:" + n + ";npdi@example.net", "sip:" + n + ";npdi=yes@example.net"} {
			assert.Equal(t, dipped, contactOf(t, s.Respond(req(dipped))), "not dipped again, kept as it came")
		}
		form, err := ParseNPDI(c.form.String())
		require.NoError(t, err)
		assert.Equal(t, c.form, form)
	}
	_, err = ParseNPDI("true")
	assert.Error(t, err)
	_, err = New(Config{Tables: diptest.Fixed(db), NPDI: 7})
	assert.Error(t, err)
}
