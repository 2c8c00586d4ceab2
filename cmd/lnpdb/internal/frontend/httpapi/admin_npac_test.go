package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/ingest/feed"
)

// TestAdminUpdatesNPACLatestView: an NPAC latest-view file posted with its
// content type is one batch: modify and new apply together, and a bad
// record refuses the whole file.
func TestAdminUpdatesNPACLatestView(t *testing.T) {
	s := newAdminServer(t)
	before := s.lrnOf(t, "12025550123")
	rec := func(tn, lrn, spid, reason string) string {
		return "1|" + tn + "|" + lrn + "|" + spid + "|20261126000000" + "||||||||||||0|" + reason + "|||1\r"
	}
	bad := rec("2025550123", "7327370999", "0987", "2") + rec("2025550124", "7327370999", "0987", "3")
	m := checkErrorBody(t, s.feed(t, feed.NPACContentType, bad), http.StatusBadRequest, CodeInvalidRequest)
	assert.Contains(t, m["details"], "feed:2: column download_reason")
	assert.Contains(t, m["details"], "nothing was applied")
	assert.Equal(t, before, s.lrnOf(t, "12025550123"))

	good := rec("2025550123", "7327370999", "0987", "2") + rec("2025550124", "7718860000", "1506", "0")
	r := s.feed(t, feed.NPACContentType, good)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, map[string]any{"applied": 2.0, "added": 1.0, "modified": 1.0, "deleted": 0.0, "pending": 2.0}, r.json(t))
	assert.Equal(t, "17327370999", s.lrnOf(t, "12025550123"))
	assert.Equal(t, "17718860000", s.lrnOf(t, "12025550124"))
}
