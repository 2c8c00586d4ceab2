package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

const adminKey = "lnp_adminadminadminadminadminadmin"

// adminServer serves the lookup API and the admin API on one table over
// real HTTP, the way lnpdb serve mounts them.
type adminServer struct {
	*server
	db    *format.DB
	admin *Admin
}

func newAdminServer(t *testing.T) *adminServer {
	t.Helper()
	return newAdminServerOn(t, testdb.Sample(t))
}

// newAdminServerOn is newAdminServer for a table of the caller's.
func newAdminServerOn(t *testing.T, db *format.DB) *adminServer {
	t.Helper()
	return newAdminServerWith(t, NewTable(db), nil)
}

// newAdminServerWith is newAdminServer with tables of the caller's (nil:
// the sample) and, when log is not nil, a shared update log.
func newAdminServerWith(t *testing.T, tables *Table, log UpdateLog) *adminServer {
	t.Helper()
	if tables == nil {
		tables = NewTable(testdb.Sample(t))
	}
	db := tables.DB()
	if db == nil {
		db = testdb.Sample(t) // what the runner compacts; never served
	}
	h, err := New(Config{Tables: tables, Keys: testKeys(), DefaultLimit: 1 << 30, Now: func() time.Time { return testNow }})
	require.NoError(t, err)
	lv, err := live.Start(live.Config{DB: db})
	require.NoError(t, err)
	t.Cleanup(lv.Stop)
	a, err := NewAdmin(AdminConfig{Tables: tables, Keys: auth.NewKeySet(auth.HashKey(adminKey)), LookupKeys: suspendedKeys{testKeys()}, Live: lv, UpdateLog: log, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			recording(a.mux, a).ServeHTTP(w, r)
			return
		}
		recording(h.mux, h).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return &adminServer{server: &server{Server: hs, h: h}, db: db, admin: a}
}

func (s *adminServer) feed(t *testing.T, contentType, body string) response {
	t.Helper()
	return s.do(t, http.MethodPost, "/admin/v1/updates", body, "Content-Type", contentType, "Authorization", "Bearer "+adminKey)
}

// lrnOf looks tn up over REST and over GraphQL, checks that both agree,
// and returns the LRN.
func (s *adminServer) lrnOf(t *testing.T, tn string) string {
	t.Helper()
	r := s.post(t, "/api/v1/lrn", `{"phone_number":"`+tn+`","include_enhanced_lrn":true}`)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	rest := r.json(t)["lrn"].(string)
	_, g := s.gql(t, `query($n: String!) { lookupLrn(phoneNumber: $n) { lrn success } }`, map[string]any{"n": tn})
	require.Empty(t, g.Errors)
	var got struct {
		LRN     string `json:"lrn"`
		Success bool   `json:"success"`
	}
	require.NoError(t, json.Unmarshal(g.Data["lookupLrn"], &got))
	require.True(t, got.Success)
	assert.Equal(t, rest, got.LRN, "REST and GraphQL agree")
	return rest
}

// checkErrorBody asserts CONTRACT §6's error body.
func checkErrorBody(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.StatusCode, "%s", r.body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	m := r.json(t)
	assert.Equal(t, code, m["code"])
	assert.NotEmpty(t, m["error"])
	assert.NotEmpty(t, m["details"])
	return m
}

func TestConfigRequired(t *testing.T) {
	tables, keys := NewTable(testdb.Sample(t)), auth.NewKeySet()
	_, err := New(Config{Keys: keys})
	assert.EqualError(t, err, "httpapi: Config.Tables is required")
	_, err = New(Config{Tables: tables})
	assert.EqualError(t, err, "httpapi: Config.Keys is required")
	_, err = NewAdmin(AdminConfig{Tables: tables})
	assert.EqualError(t, err, "httpapi: AdminConfig.Keys is required")
	_, err = NewAdmin(AdminConfig{Tables: tables, Keys: keys})
	assert.EqualError(t, err, "httpapi: AdminConfig.Live is required")
}

func TestAdminUpdatesVisibleToNextLookup(t *testing.T) {
	s := newAdminServer(t)
	require.Equal(t, "17718860000", s.lrnOf(t, "12025550123"), "the sample's port")

	r := s.feed(t, "text/csv", "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,2026-11-20T10:00:00Z\n")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, map[string]any{"applied": 1.0, "added": 0.0, "modified": 1.0, "deleted": 0.0, "pending": 1.0}, r.json(t))
	assert.Equal(t, "17327370999", s.lrnOf(t, "12025550123"))

	r = s.feed(t, "application/json", `[{"action":"D","tn":"12025550123","lrn":"","spid":"","activated_at":""},
		{"action":"a","tn":"2025550124","lrn":"7718860000","spid":"1506","activated_at":1790000000}]`)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, map[string]any{"applied": 2.0, "added": 1.0, "modified": 0.0, "deleted": 1.0, "pending": 2.0}, r.json(t))
	assert.NotEqual(t, "17327370999", s.lrnOf(t, "12025550123"), "deleted: routes by its block again")
	assert.NotEqual(t, "17718860000", s.lrnOf(t, "12025550123"))
	assert.Equal(t, "17718860000", s.lrnOf(t, "12025550124"))
	assert.Equal(t, 2, s.db.PendingUpdates())
}

func TestAdminBadRowRefusesBatch(t *testing.T) {
	s := newAdminServer(t)
	before := s.lrnOf(t, "12025550123")
	for _, c := range []struct {
		name, ct, body, details string
	}{
		{"csv syntax", "text/csv", "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,\nU,2025550124,123,0987,\n", "feed:3: column lrn"},
		{"csv action", "text/csv", "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,\nX,2025550124,7327370999,0987,\n", "feed:3: column action"},
		{"unknown spid", "text/csv", "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,\nU,2025550124,7327370999,ZZZZ,\n", `update 2 (U 2025550124): unknown SPID "ZZZZ"`},
		{"json element", "application/json", `[{"action":"U","tn":"2025550123","lrn":"7327370999","spid":"0987"},{"action":"U","tn":"202555","lrn":"7327370999","spid":"0987"}]`, "update 2: tn:"},
		{"json type", "application/json", `[{"action":"U","tn":2025550123}]`, "tn must be a string"},
		{"json object", "application/json", `{"action":"U"}`, "the body must be a JSON array of update objects; nothing"},
		{"json syntax", "application/json", `[{"action":`, "the body is not valid JSON"},
		{"json time", "application/json", `[{"action":"U","tn":"2025550123","lrn":"7327370999","spid":"0987","activated_at":1.5}]`, "activated_at must be a time string or Unix seconds"},
		{"no header", "text/csv", "U,2025550123,7327370999,0987,\n", "feed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := checkErrorBody(t, s.feed(t, c.ct, c.body), http.StatusBadRequest, CodeInvalidRequest)
			assert.Contains(t, m["details"], c.details)
			assert.Contains(t, m["details"], "nothing was applied")
			assert.Equal(t, 0, s.db.PendingUpdates())
			assert.Equal(t, before, s.lrnOf(t, "12025550123"), "the good row before the bad one is not applied")
		})
	}
	m := checkErrorBody(t, s.feed(t, "text/plain", "x"), http.StatusUnsupportedMediaType, CodeInvalidRequest)
	assert.Contains(t, m["details"], "text/csv")
}

func TestAdminKeys(t *testing.T) {
	s := newAdminServer(t)
	body := "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,\n"
	for _, path := range []string{"/admin/v1/updates", "/admin/v1/compact"} {
		r := s.do(t, http.MethodPost, path, body, "Content-Type", "text/csv")
		checkErrorBody(t, r, http.StatusUnauthorized, CodeMissingAPIKey)
		assert.Equal(t, `Bearer realm="lnpdb"`, r.Header.Get("WWW-Authenticate"))
		r = s.do(t, http.MethodPost, path, body, "Content-Type", "text/csv", "Authorization", "Bearer lnp_wrongwrongwrongwrongwrongwrongwr")
		checkErrorBody(t, r, http.StatusUnauthorized, CodeInvalidAPIKey)
		// A lookup key is known: refused as not an admin key, not as unknown.
		r = s.do(t, http.MethodPost, path, body, "Content-Type", "text/csv", "Authorization", "Bearer "+testKey)
		checkErrorBody(t, r, http.StatusForbidden, CodeForbidden)
		assert.Empty(t, r.Header.Get("WWW-Authenticate"), "the key was read; another would not help")
		// So is a valid key of a suspended account.
		r = s.do(t, http.MethodPost, path, body, "Content-Type", "text/csv", "Authorization", "Bearer "+suspendedKey)
		checkErrorBody(t, r, http.StatusForbidden, CodeForbidden)
	}
	assert.Equal(t, 0, s.db.PendingUpdates(), "nothing applied without an admin key")

	// Admin keys do not open the lookup API either.
	r := s.do(t, http.MethodPost, "/api/v1/lrn", `{"phone_number":"12025550123"}`, "Content-Type", "application/json", "Authorization", "Bearer "+adminKey)
	checkErrorBody(t, r, http.StatusUnauthorized, CodeInvalidAPIKey)
}

func TestAdminRoutes(t *testing.T) {
	s := newAdminServer(t)
	r := s.do(t, http.MethodGet, "/admin/v1/updates", "", "Authorization", "Bearer "+adminKey)
	checkErrorBody(t, r, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	assert.Equal(t, "POST", r.Header.Get("Allow"))
	checkErrorBody(t, s.do(t, http.MethodPost, "/admin/v1/nothing", "", "Authorization", "Bearer "+adminKey), http.StatusNotFound, CodeNotFound)

	// A server without admin keys has no admin API.
	plain := newServer(t)
	checkErrorBody(t, plain.do(t, http.MethodPost, "/admin/v1/updates", "", "Authorization", "Bearer "+testKey), http.StatusNotFound, CodeNotFound)
}

func TestAdminCompact(t *testing.T) {
	s := newAdminServer(t)
	r := s.feed(t, "text/csv", "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,\n")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	r = s.do(t, http.MethodPost, "/admin/v1/compact", "", "Authorization", "Bearer "+adminKey)
	require.Equal(t, http.StatusAccepted, r.StatusCode, "%s", r.body)
	assert.Equal(t, 1.0, r.json(t)["pending"])
	require.Eventually(t, func() bool { return s.db.PendingUpdates() == 0 }, 20*time.Second, 10*time.Millisecond)
	assert.Equal(t, "17327370999", s.lrnOf(t, "12025550123"), "the update is in the new file")
	reopened, err := format.Open(s.db.Path()) // s.db is the writer
	require.NoError(t, err)
	defer reopened.Close()
	assert.Equal(t, 0, reopened.PendingUpdates(), "the journal was trimmed")
}
