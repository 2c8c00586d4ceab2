// Package testweb signs a test's HTTP client in to lnpdb serve's web
// interface as a browser does.
package testweb

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// SignIn GETs the sign-in form at base+path (c's cookie jar keeps its
// pre-session cookie), then posts key with the form's token, with the
// headers hdr (name, value, …). It returns the post's status and body; c
// should not follow redirects.
func SignIn(c *http.Client, base, path, key string, hdr ...string) (*http.Response, string, error) {
	res, err := c.Get(base + path)
	if err != nil {
		return nil, "", err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(b)
	if m == nil {
		return nil, "", fmt.Errorf("GET %s: %s: no sign-in form", path, res.Status)
	}
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(url.Values{"key": {key}, "csrf": {string(m[1])}}.Encode()))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if res, err = c.Do(req); err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	b, err = io.ReadAll(res.Body)
	return res, string(b), err
}
