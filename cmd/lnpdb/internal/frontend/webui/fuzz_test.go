package webui

import (
	"bytes"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/htmlshape"
)

var fuzzFS = fstest.MapFS{"f.html": {Data: []byte(`{{define "content"}}<p>{{.Data}}</p><a href="/account/keys/{{.Data}}" title="{{.Data}}">{{.Data}}</a><input name="label" value="{{.Data}}">{{end}}`)}}

// FuzzLayout renders the layout with a hostile string in every field a
// page fills (title, notice, error, navigation, the key's id, the data)
// and checks that it changes no markup: the same tags and attributes as a
// harmless string, and the string itself in the page's text.
func FuzzLayout(f *testing.F) {
	for _, s := range []string{
		`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `'><svg onload=alert(1)>`,
		`</p><iframe src=javascript:alert(1)>`, `javascript:alert(1)`, `{{.CSRF}}`, `&lt;b&gt;`, "\x00<", `<!--`, `]]><![CDATA[`,
	} {
		f.Add(s)
	}
	ui, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	tpl, err := ui.Template(nil, fuzzFS, "f.html")
	if err != nil {
		f.Fatal(err)
	}
	render := func(t *testing.T, s string) string {
		sess := &Session{Role: RoleCustomer, Identity: Identity{KeyID: s}, csrf: "tok"}
		sess.flash = s
		var b bytes.Buffer
		p := Page{Title: s, Error: s, Data: s, Nav: []Link{{Href: "/account/" + s, Text: s}}, Session: sess, Flash: s}
		if err := tpl.t.ExecuteTemplate(&b, "layout", p); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	want, _ := htmlshape.Of(render(&testing.T{}, "x"))
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsAny(s, "<>\"'&") || strings.ContainsAny(s, "\x00\r\x0c") {
			// Only markup characters can change markup; NUL, CR and FF
			// the HTML parser rewrites in text.
			return
		}
		page := render(t, s)
		tags, text := htmlshape.Of(page)
		if !slices.Equal(tags, want) {
			t.Fatalf("the string %q changed the page's markup:\n%v\nwant\n%v", s, tags, want)
		}
		if !strings.Contains(text, s) {
			t.Fatalf("the string %q is not in the page's text", s)
		}
	})
}

// TestRenderFailureIsWhole: a template that fails answers 500 and no half
// page.
func TestRenderFailureIsWhole(t *testing.T) {
	ui, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := ui.Template(nil, fstest.MapFS{"b.html": {Data: []byte(`{{define "content"}}<p>before</p>{{.Data.Missing}}{{end}}`)}}, "b.html")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	ui.Render(w, httptest.NewRequest("GET", "/account", nil), tpl, 200, Page{Data: 1})
	if w.Code != 500 || strings.Contains(w.Body.String(), "before") {
		t.Fatalf("got %d %q", w.Code, w.Body.String())
	}
}
