package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Check is one condition of readiness besides the table: a store the
// server was configured with, and how to ask whether it is reachable.
type Check struct {
	// Name names the check in GET /readyz's body and in its exclude
	// parameter: "accounts", "update_log", "redis".
	Name string
	// Check returns nil when the store is reachable; it must return
	// within ctx's deadline.
	Check func(ctx context.Context) error
}

// checkTimeout bounds one check: a probe that waits on a store which does
// not answer is a failed check, not a hung probe.
const checkTimeout = 2 * time.Second

// checkResult is one check in GET /readyz's body.
type checkResult struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Excluded bool   `json:"excluded,omitempty"`
	Error    string `json:"error,omitempty"`
}

// readyBody is the body of GET /readyz.
type readyBody struct {
	// Status is "ready" (200) or "not ready" (503).
	Status string        `json:"status"`
	Checks []checkResult `json:"checks"`
	// Warnings name what was asked and could not be done: an exclude of
	// a check this server does not run.
	Warnings []string `json:"warnings,omitempty"`
}

// healthz answers GET /healthz, without a key: 200 while the process
// serves HTTP at all (liveness). It asks nothing of the table or the stores:
// a store that is down is no reason to restart the server.
func (h *Handler) healthz(w *recorder, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{"ok"})
}

// readyz answers GET /readyz, without a key: 200 when the table is open
// (verified before it was first served and before every replacement) and
// every configured store answers; otherwise 503. Each check is named in the
// body. ?exclude=NAME (repeatable) leaves a check out of the verdict, as
// Kubernetes' own /readyz does: a store every node shares (Redis, the update
// log) that is down makes every node not ready at once, which a probe may
// choose not to act on, since the server keeps answering without it. An
// exclude of a check this server does not run is, as in Kubernetes, no
// error but a warning in the body: one probe serves nodes with and without
// Redis.
func (h *Handler) readyz(w *recorder, r *http.Request) {
	exclude := r.URL.Query()["exclude"]
	var warnings []string
	for _, name := range exclude {
		if name != "table" && !slices.ContainsFunc(h.ready, func(c Check) bool { return c.Name == name }) {
			warnings = append(warnings, fmt.Sprintf("exclude=%q names no check this server runs", name))
		}
	}
	results := make([]checkResult, 1+len(h.ready))
	results[0] = checkResult{Name: "table", OK: true}
	if db := h.tables.DB(); db == nil || db.Info().Version == 0 {
		results[0] = checkResult{Name: "table", Error: "no table is open"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range h.ready {
		wg.Go(func() {
			res := checkResult{Name: c.Name, OK: true}
			if err := c.Check(ctx); err != nil {
				res = checkResult{Name: c.Name, Error: err.Error()}
			}
			results[i+1] = res
		})
	}
	wg.Wait()
	body := readyBody{Status: "ready", Checks: results, Warnings: warnings}
	status := http.StatusOK
	for i := range results {
		results[i].Excluded = slices.Contains(exclude, results[i].Name)
		if !results[i].OK && !results[i].Excluded {
			body.Status, status = "not ready", http.StatusServiceUnavailable
		}
	}
	writeJSON(w, status, &body)
}
