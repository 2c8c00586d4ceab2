package webui

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUpload: a multipart upload is taken only with the session's CSRF
// token as its first part, from this site, within its byte bound; the
// handler reads the parts after the token.
func TestUpload(t *testing.T) {
	s := newSite(t, false)
	var got []string
	s.ui.HandleCustomerUpload("POST /account/upload", 1<<10, func(w http.ResponseWriter, r *http.Request, _ *Session, mr *multipart.Reader) {
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			got = append(got, p.FormName()+"="+string(b))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := s.browser(t)
	require.Equal(t, http.StatusSeeOther, s.signIn(t, c, AccountSignIn, "lnp_customer").StatusCode)
	tok := s.csrf(t, c, AccountHome)
	post := func(parts [][2]string, hdr ...string) *http.Response {
		t.Helper()
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, p := range parts {
			var fw io.Writer
			var err error
			if p[0] == "file" {
				fw, err = mw.CreateFormFile(p[0], "list.csv")
			} else {
				fw, err = mw.CreateFormField(p[0])
			}
			require.NoError(t, err)
			_, _ = io.WriteString(fw, p[1])
		}
		require.NoError(t, mw.Close())
		req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/account/upload", &b)
		require.NoError(t, err)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	for name, tc := range map[string]struct {
		parts [][2]string
		hdr   []string
	}{
		"no token":          {[][2]string{{"kind", "lrn"}, {"file", "1"}}, nil},
		"wrong token":       {[][2]string{{"csrf", tok + "x"}, {"file", "1"}}, nil},
		"token not first":   {[][2]string{{"kind", "lrn"}, {"csrf", tok}, {"file", "1"}}, nil},
		"from another site": {[][2]string{{"csrf", tok}, {"file", "1"}}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		got = nil
		assert.Equal(t, http.StatusForbidden, post(tc.parts, tc.hdr...).StatusCode, name)
		assert.Empty(t, got, name+": the handler did not run")
	}
	// Not multipart: refused.
	resp, _ := s.do(t, c, http.MethodPost, "/account/upload", map[string][]string{"csrf": {tok}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	assert.Equal(t, http.StatusNoContent, post([][2]string{{"csrf", tok}, {"kind", "lrn"}, {"file", "12025550123\n"}}).StatusCode)
	assert.Equal(t, []string{"kind=lrn", "file=12025550123\n"}, got)

	// An admin's session is refused.
	a := s.browser(t)
	require.Equal(t, http.StatusSeeOther, s.signIn(t, a, ConsoleSignIn, "lnp_admin").StatusCode)
	c = a
	got = nil
	assert.Equal(t, http.StatusForbidden, post([][2]string{{"csrf", tok}, {"file", "1"}}).StatusCode)
	assert.Empty(t, got)
}
