package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// authHeader picks one of the Authorization variants the fuzzers try.
func authHeader(sel uint8, junk string) string {
	switch sel % 5 {
	case 0:
		return "Bearer " + testKey
	case 1:
		return ""
	case 2:
		return "Bearer " + limitedKey
	case 3:
		return "Bearer " + junk
	}
	return junk
}

// checkResponse is what must hold of every response: no 500, and a JSON
// body.
func checkResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("body is not JSON: %q", rec.Body)
	}
}

func FuzzREST(f *testing.F) {
	h := benchHandler(f, false)
	for _, path := range []string{"/api/v1/lrn", "/api/v1/cnam", "/api/v1/messaging", "/api/v1/trust"} {
		f.Add("POST", path, "application/json", uint8(0), []byte(`{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`))
		f.Add("POST", path, "application/json; charset=utf-8", uint8(0), []byte(`{"phone_number":"+1 (202) 555-0124"}`))
		f.Add("POST", path, "application/json", uint8(0), []byte(`{"phone_number":12025550123,"include_enhanced_lrn":"x"}`))
		f.Add("POST", path, "text/plain", uint8(3), []byte(`phone_number=1`))
	}
	f.Add("POST", "/api/v1/lrn", "application/json", uint8(0), []byte(`{"phone_number":"tel:+12025550123;npdi;rn=+12025569000"}`))
	f.Add("POST", "/api/v1/lrn", "application/json", uint8(0), []byte("{\"phone_number\":\"\xff\xfe\"}"))
	f.Add("POST", "/api/v1/lrn", "application/json", uint8(0), []byte(`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`))
	f.Add("POST", "/graphql", "application/json", uint8(0), []byte(`{"query":"{ lookupLrn(phoneNumber: \"12025550123\") { lrn carrier } }"}`))
	f.Add("POST", "/api/v1/lrn/bulk", "application/json", uint8(0), []byte(`{"phone_numbers":["12025550123","+1 202 555 0124","x"],"include_enhanced_lrn":true}`))
	f.Add("POST", "/api/v1/lrn/bulk", "application/json", uint8(0), []byte(`{"phone_numbers":["12025550123",null,5]}`))
	f.Add("GET", "/api/v1/status", "", uint8(1), []byte(nil))
	f.Add("GET", "/openapi.json", "", uint8(1), []byte(nil))
	f.Add("DELETE", "/api/v1//../lrn", "application/json", uint8(4), []byte(`{}`))
	f.Add("CONNECT", "example.com:443", "", uint8(1), []byte(nil))
	f.Add("", "", "", uint8(2), []byte(nil))

	f.Fuzz(func(t *testing.T, method, path, contentType string, auth uint8, body []byte) {
		req := &http.Request{
			Method:        method,
			URL:           &url.URL{Path: path},
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        http.Header{},
			Body:          io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)),
			Host:          "localhost",
			RemoteAddr:    "127.0.0.1:1234",
			RequestURI:    path,
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if a := authHeader(auth, contentType); a != "" {
			req.Header.Set("Authorization", a)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkResponse(t, rec)
	})
}

func FuzzGraphQL(f *testing.F) {
	h := benchHandler(f, false)
	f.Add(seedQuery, []byte(`{"number":"12025550123","includeEnhanced":true,"includeMessaging":true}`), "", false)
	f.Add(introspectionQuery, []byte(`null`), "IntrospectionQuery", false)
	f.Add(`{ lookupCnam(phoneNumber: "123") { phoneNumber cnam success error } }`, []byte(nil), "", false)
	f.Add(`query($n: String!) { a: lookupTrust(phoneNumber: $n) { trustScore reasons } b: lookupMessagingProvider(phoneNumber: $n) { messagingProvider } }`, []byte(`{"n": 12}`), "", false)
	f.Add(`{ lookupLrn(phoneNumber: "12025550123") { ...F } } fragment F on LrnResult { ...F }`, []byte(`{}`), "", false)
	f.Add(`{ lookupLrn(phoneNumber: "12025550123") { lrn }`, []byte(`{"query": "{ __typename }"}`), "", true)
	f.Add(`mutation { x }`, []byte(`[1,2]`), "x", false)
	f.Add(strings.Repeat("{", 500), []byte(`"x"`), "", false)

	f.Fuzz(func(t *testing.T, query string, variables []byte, operationName string, raw bool) {
		var body []byte
		if raw {
			body = variables
		} else {
			m := map[string]any{"query": query}
			if json.Valid(variables) {
				m["variables"] = json.RawMessage(variables)
			}
			if operationName != "" {
				m["operationName"] = operationName
			}
			var err error
			if body, err = json.Marshal(m); err != nil {
				t.Skip() // not a body this fuzzer means to send
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkResponse(t, rec)
		if rec.Code == http.StatusOK {
			var g struct {
				Data   json.RawMessage   `json:"data"`
				Errors []json.RawMessage `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || (g.Data == nil && len(g.Errors) == 0) {
				t.Fatalf("not a GraphQL response: %s", rec.Body)
			}
		}
	})
}
