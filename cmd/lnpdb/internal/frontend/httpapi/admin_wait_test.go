package httpapi

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
)

// ?wait= is a node count from 0 to 1000; above 1 it needs a shared update
// log, which this server has not. A refused wait applies nothing.
func TestAdminUpdatesWait(t *testing.T) {
	s := newAdminServer(t)
	const feed = "action,tn,lrn,spid,activated_at\nD,2014814567,,,\n"
	for _, q := range []string{"?wait=x", "?wait=-1", "?wait=1001", "?wait=2"} {
		r := s.do(t, http.MethodPost, "/admin/v1/updates"+q, feed, "Content-Type", "text/csv", "Authorization", "Bearer "+adminKey)
		checkErrorBody(t, r, http.StatusBadRequest, CodeInvalidRequest)
		assert.Zero(t, s.db.PendingUpdates(), q)
	}
	for _, q := range []string{"", "?wait=0", "?wait=1"} {
		r := s.do(t, http.MethodPost, "/admin/v1/updates"+q, feed, "Content-Type", "text/csv", "Authorization", "Bearer "+adminKey)
		assert.Equal(t, http.StatusOK, r.StatusCode, "%s: %s", q, r.body)
	}
	assert.Equal(t, 1, s.db.PendingUpdates())
}

// The status of a node that follows an update log, healthy and not, is
// what openapi.json describes.
func TestOpenAPIStatusWithUpdateLog(t *testing.T) {
	doc := openAPIDoc(t)
	for _, st := range []updatelog.Status{
		{Node: "node1", AppliedSeq: 41, HeadSeq: 41, Postgres: "ok", Listening: true},
		{Node: "node2", AppliedSeq: 7, HeadSeq: 41, Lag: 34, Postgres: "unavailable", RefusedBatches: 1, LastError: "updatelog: the update log is unavailable: dial tcp: connection refused"},
		{Node: "node3", AppliedSeq: 41, HeadSeq: 41, Postgres: "ok", Listening: true, RefusedBatches: 3, SkippedBatches: 2, SkippedSeqs: []int64{12, 30}},
	} {
		s := newServer(t, func(c *Config) { c.UpdateLog = func() updatelog.Status { return st } })
		req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v1/status", nil)
		require.NoError(t, err)
		res, err := s.Client().Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Contains(t, string(body), `"update_log":{"node":"`+st.Node+`"`)
		validateAnswer(t, doc, req, res, body, "")
	}
}
