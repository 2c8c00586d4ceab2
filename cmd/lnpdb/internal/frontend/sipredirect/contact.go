package sipredirect

import (
	"net/netip"
	"strings"

	"github.com/emiago/sipgo/sip"
	"github.com/lnpdb/lnpdb/lrn"
)

// A 302's Contact is built from the request URI's parts, each checked, and
// never copied whole: a request URI is the caller's to write, and a switch
// forks a call to every Contact a redirect names. What is kept:
//
//   - the scheme: sip, sips or tel (any other is answered 416);
//   - the user's number: digits, a leading '+' and RFC 3966 visual
//     separators, nothing else (anything else is no number: 484);
//   - of the user's (a tel URI's) parameters only those RFC 3966 and
//     RFC 4694 define for a number (userParams), with values of RFC 3986
//     unreserved characters and '+'; others are dropped, and an npdi, rn or
//     rn-context with any other character is answered 484;
//   - the host, a host name or an IPv4 or IPv6 address, and its port (any
//     other host is answered 400);
//   - of the URI's parameters user= and transport= with a token value.
//
// No URI headers (?Route=…), no password, no other parameter: the Contact
// is one URI that names the number, the dip's result and the host.

// userParams are the number parameters a Contact keeps.
var userParams = map[string]bool{
	"npdi": true, "rn": true, "rn-context": true, // RFC 4694
	"cic": true, "cic-context": true, // RFC 4694
	"isub": true, "ext": true, "phone-context": true, // RFC 3966
}

// uriParams are the SIP URI parameters a Contact keeps.
var uriParams = map[string]bool{"user": true, "transport": true}

// param is one URI parameter: ";name" or ";name=value".
type param struct{ name, value string }

// target is a request URI's parts a Contact is built from, checked.
type target struct {
	scheme    string // "sip", "sips" or "tel"
	number    string // the user's number part
	params    []param
	host      string // sip, sips: a host name or an address (IPv6 unbracketed)
	port      int
	uriParams []param
}

// rejection is why a request URI gives no Contact: a status and a Reason.
type rejection struct {
	code         int
	phrase, text string
}

var errNoNumber = &rejection{484, "Address Incomplete", "request URI has no number"}

// parseTarget checks the request URI u. It returns errNoNumber when u has
// no user, and another rejection when a part cannot be kept.
func parseTarget(u *sip.Uri) (*target, *rejection) {
	t := &target{scheme: strings.ToLower(u.Scheme)}
	user := u.User
	switch t.scheme {
	case "sip", "sips":
	case "tel":
		user = u.Raw()
	default:
		return nil, &rejection{416, "Unsupported URI Scheme", "request URI scheme is not sip, sips or tel"}
	}
	if user == "" {
		return nil, errNoNumber
	}
	number, params, _ := strings.Cut(user, ";")
	if !isNumber(number) {
		return nil, &rejection{484, "Address Incomplete", "not a NANP number"}
	}
	t.number = number
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(p, "=")
		name = strings.ToLower(name)
		if !userParams[name] {
			continue
		}
		if !isParamValue(value) {
			if name == "npdi" || name == "rn" || name == "rn-context" {
				return nil, &rejection{484, "Address Incomplete", "malformed " + name + " parameter"}
			}
			continue
		}
		t.params = append(t.params, param{name, value})
	}
	if t.scheme == "tel" {
		return t, nil
	}
	if !isHost(u.Host) || u.Port < 0 || u.Port > 65535 {
		return nil, &rejection{400, "Bad Request", "request URI host is not a host name or address"}
	}
	t.host, t.port = u.Host, u.Port
	for _, kv := range u.UriParams {
		name := strings.ToLower(kv.K)
		if uriParams[name] && isToken(kv.V) && kv.V != "" {
			t.uriParams = append(t.uriParams, param{name, kv.V})
		}
	}
	return t, nil
}

// npdi reports whether the number carries npdi: it was dipped before.
func (t *target) npdi() bool {
	for _, p := range t.params {
		if p.name == "npdi" {
			return true
		}
	}
	return false
}

// telURI is the number and its parameters as lrn reads them.
func (t *target) telURI() string {
	var b strings.Builder
	b.WriteString(t.number)
	writeParams(&b, t.params)
	return b.String()
}

// self is the Contact that redirects the request to where it was going:
// the kept parts as they came.
func (t *target) self() *sip.Uri {
	return t.uri(t.number, t.params)
}

// dipped is the Contact of a dip's answer d: the number, its other kept
// parameters, npdi in the form form and, when d has one, rn=+1LRN
// (RFC 4694).
func (t *target) dipped(d lrn.TelURI, form NPDI) *sip.Uri {
	ps := make([]param, 0, len(t.params)+2)
	for _, p := range t.params {
		if p.name != "npdi" && p.name != "rn" && p.name != "rn-context" {
			ps = append(ps, p)
		}
	}
	ps = append(ps, form.param())
	if d.RN != "" {
		ps = append(ps, param{"rn", "+" + d.RN})
	}
	return t.uri(t.number, ps)
}

func (t *target) uri(number string, ps []param) *sip.Uri {
	var b strings.Builder
	b.WriteString(number)
	writeParams(&b, ps)
	if t.scheme == "tel" {
		var u sip.Uri
		if err := sip.ParseUri("tel:"+b.String(), &u); err != nil {
			// Unreachable: every part was checked. Keep the number alone.
			_ = sip.ParseUri("tel:"+number, &u)
		}
		return &u
	}
	u := &sip.Uri{Scheme: t.scheme, User: b.String(), Host: t.host, Port: t.port}
	if len(t.uriParams) > 0 {
		u.UriParams = sip.NewParams()
		for _, p := range t.uriParams {
			u.UriParams.Add(p.name, p.value)
		}
	}
	return u
}

func writeParams(b *strings.Builder, ps []param) {
	for _, p := range ps {
		b.WriteString(";" + p.name)
		if p.value != "" {
			b.WriteString("=" + p.value)
		}
	}
}

// isNumber reports whether s is a telephone number's digits: a leading '+',
// digits and RFC 3966 visual separators, at least one digit.
func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "+")
	digit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c == '-' || c == '.' || c == '(' || c == ')':
		default:
			return false
		}
	}
	return digit
}

// isParamValue reports whether s is made of RFC 3986 unreserved characters
// and '+' (an rn's global number): nothing that ends a parameter, a user
// part, a URI or a header.
func isParamValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && !strings.ContainsRune("-._~+", rune(c)) {
			return false
		}
	}
	return true
}

// isToken reports whether s is letters, digits, '-' and '.'.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isHost reports whether s is an IPv4 or IPv6 address (no zone) or a host
// name: dot-separated labels of letters, digits and inner hyphens, at most
// 253 characters, a trailing dot allowed.
func isHost(s string) bool {
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a.Zone() == ""
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}
