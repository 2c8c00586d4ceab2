package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzForms: whatever a signed-in admin's forms carry (amount, reference,
// kind, price, the audit page's query), the console answers a redirect or
// a refusal that names the field, never a failure of its own, and never
// echoes the input as markup.
func FuzzForms(f *testing.F) {
	for _, s := range [][4]string{
		{"25.00", "INV-1", "lrn", "0.001"},
		{"-1", "", "nope", "1e9"},
		{"0", hostile, "cnam", "1000.000001"},
		{"1000000000.000001", strings.Repeat("r", 300), "", "-0"},
		{"0x10", "\x00\xff", "trust", "NaN"},
		{"", "ref", "lrn_enhanced", "0.0000001"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	fx := newFixture(f)
	b := fx.browser(f, "lnp_admin")
	acct := Accounts + "/" + fx.acct.ID
	tok := b.csrf(acct)
	f.Fuzz(func(t *testing.T, amount, ref, kind, price string) {
		b.t = t
		for _, post := range []struct {
			path string
			form url.Values
		}{
			{acct + "/credit", url.Values{"csrf": {tok}, "amount": {amount}, "ref": {ref}}},
			{acct + "/price", url.Values{"csrf": {tok}, "kind": {kind}, "price": {price}}},
		} {
			code, page := b.post(post.path, post.form)
			switch code {
			case http.StatusSeeOther, http.StatusBadRequest, http.StatusConflict:
			default:
				t.Fatalf("%s %q: %d %s", post.path, post.form, code, page)
			}
			if strings.Contains(page, "<script>alert") {
				t.Fatalf("%s echoed markup: %s", post.path, page)
			}
		}
		code, page := b.get(Audit + "?account=" + url.QueryEscape(ref) + "&before=" + url.QueryEscape(amount))
		if code != http.StatusOK || strings.Contains(page, "<script>alert") {
			t.Fatalf("audit page: %d %s", code, page)
		}
	})
}
