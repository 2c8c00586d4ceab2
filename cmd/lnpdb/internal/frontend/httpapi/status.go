package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/lnpdb/lnpdb/format"
)

// statusBody is the body of GET /api/v1/status.
type statusBody struct {
	Status string `json:"status"`
	// Server is the binary's identity: its module version, the commit and
	// Go version it was built with, the table format it reads.
	Server buildinfo.Info `json:"server"`
	Table  tableStatus    `json:"table"`
	Live   *live.Status   `json:"live,omitempty"`
	// Pull is the table fetch from an origin (serve --db-url).
	Pull *distribute.Status `json:"pull,omitempty"`
	// Redis is the shared rate limiter's health (serve --redis).
	Redis *redislimit.Status `json:"redis,omitempty"`
	// UpdateLog is this node's place in the shared update log (serve
	// --updates-log).
	UpdateLog *updatelog.Status `json:"update_log,omitempty"`
}

type tableStatus struct {
	// ID is the table file's format.FileID: nodes serving one table show
	// one ID, the ETag GET /admin/v1/table sends for it.
	ID      string        `json:"id"`
	Version int           `json:"version"`
	BuiltAt lnpdb.Time    `json:"built_at,omitzero"`
	Size    int64         `json:"size"`
	Counts  format.Counts `json:"counts"`
}

// status answers GET /api/v1/status, without a key: the loaded table's
// version, build time and counts, or 503 UNAVAILABLE without one.
func (h *Handler) status(w *recorder, r *http.Request) {
	db := h.tables.DB()
	if db == nil {
		writeError(w, errUnavailable)
		return
	}
	info := db.Info()
	if info.Version == 0 { // closed under us
		writeError(w, errUnavailable)
		return
	}
	var built lnpdb.Time
	if !info.BuiltAt.IsZero() {
		built = lnpdb.Unix(info.BuiltAt.Unix())
	}
	body := statusBody{
		Status: "ok",
		Server: h.build,
		Table:  tableStatus{ID: info.ID, Version: info.Version, BuiltAt: built, Size: info.Size, Counts: info.Counts},
		Live:   section(h.live), Pull: section(h.pull), Redis: section(h.redis), UpdateLog: section(h.updlog),
	}
	serveStatus(w, r, &body)
}

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of the REST API, as GET
// /openapi.json serves it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// section returns the status part that report answers, or nil (left out of
// the body) when the server runs without that part.
func section[T any](report func() T) *T {
	if report == nil {
		return nil
	}
	st := report()
	return &st
}
