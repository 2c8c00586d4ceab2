package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
)

// The admin API changes the table while it serves:
//
//	POST /admin/v1/updates   apply an update feed, all or nothing
//	POST /admin/v1/compact   start a compaction in the background
//
// Only admin keys are accepted: the key set is separate from the lookup
// keys, and admin requests are not rate limited.

// MaxUpdateBodyBytes caps the body of POST /admin/v1/updates: a feed of
// about a million rows.
const MaxUpdateBodyBytes = 64 << 20

// Live is what the admin API needs of the runner that keeps the table
// current (live.Runner).
type Live interface {
	// StartCompaction starts a compaction in the background and reports
	// whether it started (false: one is running already).
	StartCompaction(reason string) bool
	// Applied is told of each applied batch.
	Applied()
}

// UpdateLog is the shared update log that several nodes follow
// (updatelog.Follower).
type UpdateLog interface {
	// Post checks a batch against this node's table, appends it to the
	// log and waits, within ctx, until wait nodes (this one first) have
	// applied it.
	Post(ctx context.Context, ups []format.Update, key string, wait int) (updatelog.Result, error)
}

// UpdateWaitTimeout bounds how long POST /admin/v1/updates waits for nodes
// to apply a batch that is in the shared log already.
const UpdateWaitTimeout = 10 * time.Second

// AdminConfig configures the admin handler. Tables, Keys and Live are
// required.
type AdminConfig struct {
	// Tables gives the table updates are applied to.
	Tables TableSource
	// Keys authenticates admin keys; lookup keys do not belong here.
	Keys auth.KeyStore
	// LookupKeys, when set, are the server's lookup keys: one of them sent
	// here is known, and refused as such (403), not as unknown (401) — a
	// valid key of a suspended account too, when LookupKeys is also
	// SuspendedKeys.
	LookupKeys auth.KeyStore
	// Live compacts the table: in the background when asked, and past
	// its threshold after each applied batch. Required.
	Live Live
	// UpdateLog, when set, is the log every node follows: a posted feed
	// is appended to it, and the node's follower applies it here as on
	// every other node.
	UpdateLog UpdateLog
	// Logger receives errors and, with AccessLog, one line per request.
	Logger    *slog.Logger
	AccessLog bool
}

// Admin is the http.Handler of the admin API, for paths under /admin/.
type Admin struct {
	tables TableSource
	keys   auth.KeyStore
	lookup auth.KeyStore
	live   Live
	updlog UpdateLog
	log    *slog.Logger
	access bool
	mux    *routes
}

// NewAdmin returns the admin handler for cfg.
func NewAdmin(cfg AdminConfig) (*Admin, error) {
	if err := required("AdminConfig", "Tables", cfg.Tables, "Keys", cfg.Keys, "Live", cfg.Live); err != nil {
		return nil, err
	}
	a := &Admin{tables: cfg.Tables, keys: cfg.Keys, lookup: cfg.LookupKeys, live: cfg.Live, updlog: cfg.UpdateLog,
		log: cfg.Logger, access: cfg.AccessLog, mux: newRoutes()}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	for path, fn := range map[string]func(*recorder, *http.Request){
		"/admin/v1/updates": a.updates,
		"/admin/v1/compact": a.compactNow,
	} {
		a.mux.handle("POST "+path, &route{path, fn})
		a.mux.handle(path, &route{path, notAllowed(hdrPost, errAdminMethod)})
	}
	a.routeTable() // GET /admin/v1/table, tablefile.go
	return a, nil
}

var errNotAdminKey = &apiError{http.StatusForbidden, errorBody{
	"Forbidden", CodeForbidden,
	"The API key is a lookup key; the admin API takes admin keys (--admin-keys)"}}

var errAdminMethod = &apiError{http.StatusMethodNotAllowed, errorBody{
	"Method not allowed", CodeMethodNotAllowed, "This endpoint takes POST"}}

// ServeHTTP implements http.Handler.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, route: "other"}
	defer func() {
		recoverRequest(recover(), a.log, rec, r)
		if a.access {
			a.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("method", clip(r.Method)), slog.String("path", clip(r.URL.Path)),
				slog.Int("status", rec.status), slog.Duration("duration", time.Since(start)),
				slog.Int("bytes", rec.bytes), slog.String("admin_key", rec.keyID),
				slog.String("remote", r.RemoteAddr))
		}
	}()
	dispatch(a.mux.ServeMux, rec, r)
}

// authorize authenticates an admin key. When it returns false it has
// written the response.
func (a *Admin) authorize(w *recorder, r *http.Request) bool {
	tok, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		w.Header()["Www-Authenticate"] = hdrBearer
		writeError(w, errMissingKey)
		return false
	}
	key, ok := a.keys.Authenticate(tok)
	if !ok {
		if a.lookup != nil {
			if k, known := a.lookup.Authenticate(tok); known {
				w.keyID = k.ID()
				writeError(w, errNotAdminKey)
				return false
			}
			if s, ok := a.lookup.(SuspendedKeys); ok && s.Suspended(tok) {
				writeError(w, errNotAdminKey)
				return false
			}
		}
		w.Header()["Www-Authenticate"] = hdrBearer
		writeError(w, errInvalidKey)
		return false
	}
	w.keyID = key.ID()
	return true
}

// authorizedTable authorizes r as authorize does and returns the served
// table; it returns nil when it has answered instead: a missing or unknown
// key, or no table being served.
func (a *Admin) authorizedTable(w *recorder, r *http.Request) *format.DB {
	if !a.authorize(w, r) {
		return nil
	}
	db := a.tables.DB()
	if db == nil {
		writeError(w, errUnavailable)
	}
	return db
}

// updatesBody is the answer to POST /admin/v1/updates.
type updatesBody struct {
	Applied  int `json:"applied"`
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	Pending  int `json:"pending"` // numbers awaiting compaction, after the batch
	// With a shared update log: the batch's sequence number in it, how
	// many nodes had applied it when answered, and the nodes known to
	// have passed it without applying it (their table refused it).
	Seq          int64    `json:"seq,omitempty"`
	NodesApplied int      `json:"nodes_applied,omitempty"`
	NodesRefused []string `json:"nodes_refused,omitempty"`
}

// AdminBodyTimeout bounds how long an update feed may take to arrive: 64 MiB
// at 112 KB/s. The server's own read and write timeouts are far shorter.
const AdminBodyTimeout = 10 * time.Minute

// maxIdempotencyKey is the longest Idempotency-Key header accepted.
const maxIdempotencyKey = 255

var (
	errIdempotencyKeyTooLong = invalidRequest("The Idempotency-Key header is longer than 255 bytes")
	errIdempotencyKeyReused  = &apiError{http.StatusUnprocessableEntity, errorBody{
		"Idempotency key reused", CodeIdempotencyKeyReused,
		"This Idempotency-Key was sent before with other updates; nothing was applied. Use a new key for a new feed"}}
	errJournalBroken = &apiError{http.StatusServiceUnavailable, errorBody{
		"Storage unavailable", CodeStorageUnavailable,
		"Updates are refused: a failed write left the journal unusable; lookups go on. A compaction (POST /admin/v1/compact) or a restart makes updates possible again; nothing was applied"}}
	errFeedType = &apiError{http.StatusUnsupportedMediaType, errorBody{"Unsupported media type", CodeInvalidRequest,
		"Content-Type must be text/csv (the update feed: action,tn,lrn,spid,activated_at), application/json (an array of such objects) or " + feed.NPACContentType + " (an NPAC latest-view subscription version file)"}}
	errFeedTooBig = &apiError{http.StatusRequestEntityTooLarge, errorBody{"Request body too large", CodeInvalidRequest,
		"The request body is larger than 64 MiB; split the feed"}}
	errFeedClosing = &apiError{http.StatusServiceUnavailable, errorBody{
		"Service unavailable", CodeUnavailable, "The table is being closed; retry shortly"}}
	errWait      = invalidRequest("The wait parameter must be an integer from 0 to 1000: how many nodes must have applied the batch before the answer")
	errWaitNoLog = invalidRequest("wait above 1 needs a shared update log (serve --updates-log); this node applies the batch before it answers")
)

// maxWait is the largest ?wait= accepted.
const maxWait = 1000

// waitParam reads ?wait=N: how many nodes must have applied a batch before
// the answer; 1 (this node) by default.
func waitParam(r *http.Request) (int, bool) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxWait {
		return 0, false
	}
	return n, true
}

// errLogUnavailable is the answer while the shared update log cannot be
// reached; details say what the log said.
func errLogUnavailable(err error) *apiError {
	d := "The shared update log (PostgreSQL) is unreachable: nothing was logged or applied; lookups go on. Retry later (with the same Idempotency-Key)"
	if strings.Contains(err.Error(), "may be in the log") {
		d = "The shared update log (PostgreSQL) stopped answering while the batch was committed: it may be in the log. Send it again with the same Idempotency-Key to know; lookups go on"
	}
	return &apiError{http.StatusServiceUnavailable, errorBody{"Storage unavailable", CodeStorageUnavailable, d}}
}

func (a *Admin) updates(w *recorder, r *http.Request) {
	if !a.authorize(w, r) {
		return
	}
	parse := feed.ParseJSON
	switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); {
	case mt == "text/csv":
		parse = feed.ParseCSV
	case mt == feed.NPACContentType:
		parse = feed.ParseNPAC
	case isJSON(r.Header.Get("Content-Type")):
	default:
		writeError(w, errFeedType)
		return
	}
	if r.ContentLength > MaxUpdateBodyBytes {
		writeError(w, errFeedTooBig)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		writeError(w, errIdempotencyKeyTooLong)
		return
	}
	wait, ok := waitParam(r)
	switch {
	case !ok:
		writeError(w, errWait)
		return
	case wait > 1 && a.updlog == nil:
		writeError(w, errWaitNoLog)
		return
	}
	// A feed of up to 64 MiB on a slow link takes longer than the server's
	// request timeouts allow; it gets its own deadlines, so that its
	// answer — written only after the fsync — reaches the client.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(AdminBodyTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(AdminBodyTimeout + time.Minute))
	body, err := io.ReadAll(http.MaxBytesReader(w.ResponseWriter, r.Body, MaxUpdateBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, errFeedTooBig)
		} else {
			writeError(w, errReadBody)
		}
		return
	}
	ups, err := parse(body)
	if err != nil {
		writeError(w, invalidRequest(err.Error()+"; nothing was applied"))
		return
	}
	if a.updlog != nil {
		a.postToLog(w, r, ups, key, wait)
		return
	}
	db := a.tables.DB()
	if db == nil {
		writeError(w, errUnavailable)
		return
	}
	rec, err := db.ApplyBatch(ups, key)
	if err != nil {
		switch e := refusedUpdate(err, "nothing was applied", format.ErrIdempotencyKeyReused); {
		case e != nil:
			writeError(w, e)
		case errors.Is(err, format.ErrJournalBroken):
			a.log.LogAttrs(r.Context(), slog.LevelError, "updates refused: the journal is unusable until a compaction rewrites it or the server restarts",
				slog.Int("updates", len(ups)), slog.String("error", err.Error()))
			writeError(w, errJournalBroken)
		default:
			e := storageFailure(err)
			a.log.LogAttrs(r.Context(), slog.LevelError, "applying updates failed",
				slog.Int("updates", len(ups)), slog.Int("status", e.status), slog.String("error", err.Error()))
			writeError(w, e)
		}
		return
	}
	res := updatesBody{Applied: rec.Applied, Added: rec.Added, Modified: rec.Modified, Deleted: rec.Deleted, Pending: rec.Pending}
	if rec.Replayed {
		// The first answer to this key, again: nothing was applied now.
		w.Header().Set("Idempotent-Replayed", "true")
		a.log.LogAttrs(r.Context(), slog.LevelInfo, "updates already applied under this idempotency key",
			slog.Int("applied", res.Applied), slog.String("admin_key", w.keyID))
		writeJSON(w, http.StatusOK, &res)
		return
	}
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "updates applied",
		slog.Int("applied", res.Applied), slog.Int("pending", res.Pending), slog.String("admin_key", w.keyID))
	if len(ups) > 0 {
		a.live.Applied()
	}
	writeJSON(w, http.StatusOK, &res)
}

// refusedUpdate is the answer to a batch refused for what it is or when it
// came, alike from the table and from the shared update log: 400 for an
// invalid batch (what was wrong with it, and that nothing, notDone, came of
// it), 503 while the feed is closing, 409 for an idempotency key the store
// knows for other updates (keyReused, the store's error for it). Any other
// error is nil: the caller logs and answers it.
func refusedUpdate(err error, notDone string, keyReused error) *apiError {
	switch {
	case errors.Is(err, format.ErrInvalidUpdate):
		return invalidRequest("Invalid update: " + strings.TrimPrefix(err.Error(), "format: invalid update: ") + "; " + notDone)
	case errors.Is(err, format.ErrClosed):
		return errFeedClosing
	case errors.Is(err, keyReused):
		return errIdempotencyKeyReused
	}
	return nil
}

// postToLog appends a parsed feed to the shared update log and answers once
// it is durable there and wait nodes have applied it: 200, or 202 when
// fewer had within UpdateWaitTimeout, or when every node had passed it and
// too many had refused it (nodes_refused names them). The batch is logged
// all the same; a refusing node applies it once its table takes it.
func (a *Admin) postToLog(w *recorder, r *http.Request, ups []format.Update, key string, wait int) {
	ctx, cancel := context.WithTimeout(r.Context(), UpdateWaitTimeout)
	defer cancel()
	res, err := a.updlog.Post(ctx, ups, key, wait)
	if err != nil {
		switch e := refusedUpdate(err, "nothing was logged or applied", updatelog.ErrKeyReused); {
		case e != nil:
			writeError(w, e)
		case errors.Is(err, updatelog.ErrUnavailable):
			a.log.LogAttrs(r.Context(), slog.LevelError, "updates refused: the shared update log is unreachable",
				slog.Int("updates", len(ups)), slog.String("error", err.Error()))
			writeError(w, errLogUnavailable(err))
		default:
			a.log.LogAttrs(r.Context(), slog.LevelError, "logging updates failed",
				slog.Int("updates", len(ups)), slog.String("error", err.Error()))
			writeError(w, errInternal)
		}
		return
	}
	body := updatesBody{Applied: res.Added + res.Modified + res.Deleted, Added: res.Added, Modified: res.Modified,
		Deleted: res.Deleted, Pending: res.Pending, Seq: res.Seq, NodesApplied: res.Nodes, NodesRefused: res.Refused}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	status := http.StatusOK
	if !res.Complete {
		status = http.StatusAccepted
	}
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "updates logged",
		slog.Int64("seq", res.Seq), slog.Int("applied", body.Applied), slog.Bool("replayed", res.Replayed),
		slog.Int("nodes_applied", res.Nodes), slog.Any("nodes_refused", res.Refused), slog.String("admin_key", w.keyID))
	writeJSON(w, status, &body)
}

// compactBody is the answer to POST /admin/v1/compact.
type compactBody struct {
	Status  string `json:"status"`  // "started", or "running" when one runs already
	Pending int    `json:"pending"` // numbers awaiting compaction when asked
}

func (a *Admin) compactNow(w *recorder, r *http.Request) {
	db := a.authorizedTable(w, r)
	if db == nil {
		return
	}
	res := compactBody{Status: "running", Pending: db.PendingUpdates()}
	if a.live.StartCompaction("admin") {
		res.Status = "started"
	}
	writeJSON(w, http.StatusAccepted, &res)
}
