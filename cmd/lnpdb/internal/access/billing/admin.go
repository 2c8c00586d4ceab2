package billing

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/jsonbody"
)

// AdminConfig configures the accounts admin API. Store and Authorize are
// required.
type AdminConfig struct {
	// StoreTimeout bounds the store calls of one request; 0 means
	// DefaultStoreTimeout.
	StoreTimeout time.Duration
	Store        Store
	// Authorize reports whether a bearer token is an admin key, and its id
	// (for the audit log: auth.Key.ID).
	Authorize func(token string) (keyID string, ok bool)
	// LookupKey, when set, reports whether a token that is no admin key
	// is one of the server's lookup keys: it is known, and refused as
	// such (403), not as unknown (401).
	LookupKey func(token string) bool
	// Changed is called after a change to keys or accounts (so that a
	// serving engine reloads them at once); nil means nothing.
	Changed func(context.Context)
	// NewKey returns a new API key's text and its SHA-256.
	NewKey func() (string, [32]byte)
	Now    func() time.Time
	Logger *slog.Logger
}

// Admin serves the operator's operations on accounts over HTTP, the same
// as the lnpdb account, key, wallet, price and usage commands:
//
//	GET  /admin/v1/accounts                          list
//	POST /admin/v1/accounts                          {name} → 201 the account
//	GET  /admin/v1/accounts/{id}                     the account, its keys, prices and this month's usage
//	POST /admin/v1/accounts/{id}/suspend|activate    the account
//	GET  /admin/v1/accounts/{id}/keys                its keys
//	POST /admin/v1/accounts/{id}/keys                {label, rate_limit} → 201 the key, shown once
//	POST /admin/v1/accounts/{id}/keys/{key}/revoke   the key
//	POST /admin/v1/accounts/{id}/credits             {amount, ref} → 201, or 200 when ref was credited before
//	GET  /admin/v1/accounts/{id}/prices              its prices
//	PUT  /admin/v1/accounts/{id}/prices/{kind}       {price} → its prices
//	GET  /admin/v1/prices                            the default prices
//	PUT  /admin/v1/prices/{kind}                     {price} → the default prices
//	GET  /admin/v1/usage?month=YYYY-MM[&account=ID][&format=csv]  the usage ledger
//
// Amounts are dollars as strings ("25.00"), parsed exactly. Errors are
// {"error", "code", "details"}.
type Admin struct {
	cfg AdminConfig
	mux *http.ServeMux
}

// NewAdmin returns the accounts admin API.
func NewAdmin(cfg AdminConfig) (*Admin, error) {
	if cfg.Store == nil || cfg.Authorize == nil || cfg.NewKey == nil {
		return nil, errors.New("billing: AdminConfig needs Store, Authorize and NewKey")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	if cfg.Changed == nil {
		cfg.Changed = func(context.Context) {}
	}
	a := &Admin{cfg: cfg, mux: http.NewServeMux()}
	for pattern, fn := range map[string]func(*http.Request) (int, any, error){
		"GET /admin/v1/accounts":                         a.list,
		"POST /admin/v1/accounts":                        a.create,
		"GET /admin/v1/accounts/{id}":                    a.show,
		"POST /admin/v1/accounts/{id}/suspend":           a.status(StatusSuspended),
		"POST /admin/v1/accounts/{id}/activate":          a.status(StatusActive),
		"GET /admin/v1/accounts/{id}/keys":               a.keys,
		"POST /admin/v1/accounts/{id}/keys":              a.newKey,
		"POST /admin/v1/accounts/{id}/keys/{key}/revoke": a.revoke,
		"POST /admin/v1/accounts/{id}/credits":           a.credit,
		"GET /admin/v1/accounts/{id}/prices":             a.prices,
		"PUT /admin/v1/accounts/{id}/prices/{kind}":      a.setPrice,
		"GET /admin/v1/prices":                           a.prices,
		"PUT /admin/v1/prices/{kind}":                    a.setPrice,
		"GET /admin/v1/usage":                            a.usage,
		"/admin/v1/accounts":                             notAllowed,
		"/admin/v1/accounts/{id}":                        notAllowed,
		"/admin/v1/accounts/{id}/{op}":                   opNotAllowed,
		"/admin/v1/accounts/{id}/keys/{key}/revoke":      notAllowed,
		"/admin/v1/accounts/{id}/prices/{kind}":          notAllowed,
		"/admin/v1/prices":                               notAllowed,
		"/admin/v1/prices/{kind}":                        notAllowed,
		"/admin/v1/usage":                                notAllowed,
	} {
		a.mux.Handle(pattern, a.handle(fn))
	}
	return a, nil
}

// ServeHTTP implements http.Handler.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lnpdb-admin"`)
		writeErr(w, http.StatusUnauthorized, "Missing API key", "MISSING_API_KEY", "Send the header Authorization: Bearer <ADMIN_KEY>")
		return
	}
	tok = strings.TrimSpace(tok)
	keyID, ok := a.cfg.Authorize(tok)
	if !ok && a.cfg.LookupKey != nil && a.cfg.LookupKey(tok) {
		writeErr(w, errNotAdminKey.status, errNotAdminKey.msg, errNotAdminKey.code, errNotAdminKey.dt)
		return
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lnpdb-admin"`)
		writeErr(w, http.StatusUnauthorized, "Invalid API key", "INVALID_API_KEY", "The key is not an admin key")
		return
	}
	// The changes this request makes are audited as this key's.
	r = r.WithContext(WithActor(r.Context(), Actor{Key: keyID, Remote: r.RemoteAddr, Via: "api", At: a.cfg.Now()}))
	if _, pattern := a.mux.Handler(r); pattern == "" {
		writeErr(w, errNoEndpoint.status, errNoEndpoint.msg, errNoEndpoint.code, errNoEndpoint.dt)
		return
	}
	a.mux.ServeHTTP(w, r) // sets the path's values
}

// apiErr is a failure with its status and code.
type apiErr struct {
	status        int
	msg, code, dt string
}

func (e *apiErr) Error() string { return e.dt }

// IsBadRequest reports whether err is a request the admin operations
// refuse as malformed (the API's 400 INVALID_REQUEST).
func IsBadRequest(err error) bool {
	var ae *apiErr
	return errors.As(err, &ae) && ae.status == http.StatusBadRequest
}

func badRequest(format string, args ...any) error {
	return &apiErr{http.StatusBadRequest, "Invalid request", "INVALID_REQUEST", fmt.Sprintf(format, args...)}
}

func notAllowed(*http.Request) (int, any, error) {
	return 0, nil, &apiErr{http.StatusMethodNotAllowed, "Method not allowed", "METHOD_NOT_ALLOWED", "See /openapi.json for the methods of this endpoint"}
}

var errNotAdminKey = &apiErr{http.StatusForbidden, "Forbidden", "FORBIDDEN", "The API key is a lookup key; the admin API takes admin keys (--admin-keys)"}

var errNoEndpoint = &apiErr{http.StatusNotFound, "Not found", "NOT_FOUND", "No such endpoint; see /openapi.json"}

// opNotAllowed answers /admin/v1/accounts/{id}/{op}: 405 for an operation
// there is, with another method; 404 for one there is not.
func opNotAllowed(r *http.Request) (int, any, error) {
	switch r.PathValue("op") {
	case "suspend", "activate", "keys", "credits", "prices":
		return notAllowed(r)
	}
	return 0, nil, errNoEndpoint
}

func (a *Admin) handle(fn func(*http.Request) (int, any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.StoreTimeout)
		defer cancel()
		status, v, err := fn(r.WithContext(ctx))
		var ae *apiErr
		switch {
		case err == nil:
			if csvBody, ok := v.([]byte); ok {
				w.Header().Set("Content-Type", "text/csv; charset=utf-8")
				w.WriteHeader(status)
				_, _ = w.Write(csvBody)
				return
			}
			writeJSON(w, status, v)
		case errors.As(err, &ae):
			writeErr(w, ae.status, ae.msg, ae.code, ae.dt)
		case errors.Is(err, ErrNotFound):
			writeErr(w, http.StatusNotFound, "Not found", "NOT_FOUND", err.Error())
		case errors.Is(err, ErrConflict):
			writeErr(w, http.StatusConflict, "Conflict", "CONFLICT", err.Error())
		case errors.Is(err, ErrInvalid):
			writeErr(w, http.StatusBadRequest, "Invalid request", "INVALID_REQUEST", err.Error())
		default:
			a.cfg.Logger.Error("accounts admin request failed", "method", r.Method, "path", r.URL.Path, "error", err)
			writeErr(w, http.StatusServiceUnavailable, "Service unavailable", "UNAVAILABLE", "The accounts store failed; the failure has been logged")
		}
	})
}

// writeJSON writes v as the lookup API writes its bodies (package
// jsonbody): compact, one line, no HTML escaping.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	_ = jsonbody.NewEncoder(&b).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// errBody is the error body of the lookup API (CONTRACT §6), its fields in
// that API's order.
type errBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

func writeErr(w http.ResponseWriter, status int, msg, code, details string) {
	writeJSON(w, status, &errBody{msg, code, details})
}

// decode reads a JSON object body of at most 64 KiB into v.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return badRequest("Content-Type must be application/json")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return badRequest("the request body could not be read")
	}
	if len(body) > 64<<10 {
		return badRequest("the request body is larger than 64 KiB")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body must be a JSON object of the documented fields: %v", err)
	}
	if dec.More() {
		return badRequest("the body must be one JSON object")
	}
	return nil
}

// amount is dollars in a request: a string ("25.00") or a JSON number
// (25.00), parsed exactly either way.
type amount struct {
	set bool
	m   Micros
	err error
}

func (a *amount) UnmarshalJSON(b []byte) error {
	a.set = true
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		s = string(b)
	}
	a.m, a.err = ParseAmount(s)
	return nil
}

// decodeAmount decodes r's body into req, a request with one amount, and
// returns that amount, a, the field called name on the wire: it is
// required, in dollars.
func decodeAmount(r *http.Request, req any, a *amount, name string) (Micros, error) {
	if err := decode(r, req); err != nil {
		return 0, err
	}
	switch {
	case !a.set:
		return 0, badRequest("%s is required: dollars, e.g. \"25.00\"", name)
	case a.err != nil:
		return 0, badRequest("%s: %v", name, a.err)
	}
	return a.m, nil
}

// The admin API writes times as the lookup API does, by its one rule
// (lnpdb.Time: RFC 3339 with a numeric offset, UTC as +00:00, whole
// seconds). The store's records keep time.Time, and their own encoding
// on disk; these are the records as a body carries them, each time field
// written over by its wire form.
type (
	accountJSON struct {
		Account
		Created lnpdb.Time `json:"created"`
	}
	keyJSON struct {
		KeyRecord
		Created  lnpdb.Time `json:"created"`
		Revoked  lnpdb.Time `json:"revoked,omitzero"`
		LastUsed lnpdb.Time `json:"last_used,omitzero"`
	}
	creditJSON struct {
		Credit
		Created lnpdb.Time `json:"created"`
	}
)

// wireTime is t as the lookup API writes a time; the zero time stays zero.
func wireTime(t time.Time) lnpdb.Time {
	if t.IsZero() {
		return lnpdb.Time{}
	}
	return lnpdb.Time{Time: t.UTC().Truncate(time.Second)}
}

func accountBody(a Account) accountJSON { return accountJSON{a, wireTime(a.Created)} }
func keyBody(k KeyRecord) keyJSON {
	return keyJSON{k, wireTime(k.Created), wireTime(k.Revoked), wireTime(k.LastUsed)}
}
func creditBody(c Credit) creditJSON { return creditJSON{c, wireTime(c.Created)} }

// bodies maps each record of s to its body; never nil, so that an empty
// list is written [].
func bodies[T, B any](s []T, body func(T) B) []B {
	out := make([]B, len(s))
	for i, v := range s {
		out[i] = body(v)
	}
	return out
}

func (a *Admin) list(r *http.Request) (int, any, error) {
	accts, err := a.cfg.Store.Accounts(r.Context())
	return http.StatusOK, map[string]any{"accounts": bodies(accts, accountBody)}, err
}

func (a *Admin) create(r *http.Request) (int, any, error) {
	var req struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Name == nil {
		return 0, nil, badRequest("name is required")
	}
	acc, err := a.CreateAccount(r.Context(), *req.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, accountBody(acc), nil
}

// AccountView is an account as GET /admin/v1/accounts/{id} shows it.
type AccountView struct {
	accountJSON
	FreeLeft int64         `json:"free_left_this_month"`
	Prices   []PriceReport `json:"prices"`
	Keys     []keyJSON     `json:"keys"`
	Usage    []UsageRow    `json:"usage_this_month"`
	Credits  []creditJSON  `json:"credits"`
}

func (a *Admin) show(r *http.Request) (int, any, error) {
	d, err := a.Account(r.Context(), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, AccountView{accountBody(d.Account), d.FreeLeft, d.Prices, bodies(d.Keys, keyBody), nonNil(d.Usage), bodies(d.Credits, creditBody)}, nil
}

// The operations below are the admin API's, the operator console's and
// the lnpdb account, key, wallet and price commands' alike: one rule for
// each change, whichever page, endpoint or command asks. A change is
// audited as the Actor its context carries (WithActor).

// AccountDetail is an account with its keys, prices, credits and this
// month's usage.
type AccountDetail struct {
	Account
	FreeLeft int64 // free lookups left this month
	Prices   []PriceReport
	Keys     []KeyRecord
	Usage    []UsageRow // this month's
	Credits  []Credit
}

// Accounts returns every account.
func (a *Admin) Accounts(ctx context.Context) ([]Account, error) {
	return a.cfg.Store.Accounts(ctx)
}

// Jobs returns the lookup jobs of accountID ("" for every account), newest
// first, at most limit (see [Jobs.ListJobs]).
func (a *Admin) Jobs(ctx context.Context, accountID string, limit int) ([]Job, error) {
	js, ok := a.cfg.Store.(Jobs)
	if !ok {
		return nil, errors.New("accounts store: this store keeps no lookup jobs")
	}
	return js.ListJobs(ctx, accountID, limit)
}

// Audit returns the audit log (see [Store.Audit]).
func (a *Admin) Audit(ctx context.Context, accountID string, before int64, limit int) ([]AuditEntry, error) {
	return a.cfg.Store.Audit(ctx, accountID, before, limit)
}

// Account returns the account id in detail.
func (a *Admin) Account(ctx context.Context, id string) (AccountDetail, error) {
	s := a.cfg.Store
	acc, err := s.Account(ctx, id)
	if err != nil {
		return AccountDetail{}, err
	}
	d := AccountDetail{Account: acc}
	month := Month(a.cfg.Now())
	if d.FreeLeft, err = s.FreeLeft(ctx, id, month); err != nil {
		return AccountDetail{}, err
	}
	p, err := s.Prices(ctx, id)
	if err != nil {
		return AccountDetail{}, err
	}
	d.Prices = PriceList(p)
	if d.Keys, err = s.Keys(ctx, id); err != nil {
		return AccountDetail{}, err
	}
	if d.Usage, err = s.Usage(ctx, id, month); err != nil {
		return AccountDetail{}, err
	}
	if d.Credits, err = s.Credits(ctx, id); err != nil {
		return AccountDetail{}, err
	}
	return d, nil
}

// CreateAccount opens an account for name.
func (a *Admin) CreateAccount(ctx context.Context, name string) (Account, error) {
	acc, err := a.cfg.Store.CreateAccount(ctx, name, a.cfg.Now())
	if err == nil {
		a.cfg.Changed(ctx)
	}
	return acc, err
}

// NewKey makes a key for the account id, with its own rate limit (0: the
// server's default), and returns its record and its text: shown once,
// stored nowhere.
func (a *Admin) NewKey(ctx context.Context, id, label string, limit int) (KeyRecord, string, error) {
	if limit < 0 {
		return KeyRecord{}, "", badRequest("rate_limit must not be negative (0: the server's default)")
	}
	text, h := a.cfg.NewKey()
	k, err := a.cfg.Store.AddKey(ctx, KeyRecord{AccountID: id, Label: label, Hash: h, Limit: limit}, a.cfg.Now())
	if err != nil {
		return KeyRecord{}, "", err
	}
	a.cfg.Changed(ctx)
	return k, text, nil
}

// SetStatus suspends (StatusSuspended) or resumes (StatusActive) the
// account id; its keys stop or start authenticating at once.
func (a *Admin) SetStatus(ctx context.Context, id string, st Status) (Account, error) {
	acc, err := a.cfg.Store.SetStatus(ctx, id, st)
	if err == nil {
		a.cfg.Changed(ctx)
	}
	return acc, err
}

// RevokeKey revokes the key keyID of the account id.
func (a *Admin) RevokeKey(ctx context.Context, id, keyID string) (KeyRecord, error) {
	k, err := a.cfg.Store.RevokeKey(ctx, id, keyID, a.cfg.Now())
	if err == nil {
		a.cfg.Changed(ctx)
	}
	return k, err
}

// CreditResult is a top-up as [Admin.Credit] made it.
type CreditResult struct {
	Credit
	Applied bool   // false: ref was credited before, nothing changed
	Balance Micros // the wallet after it: balance and leases
}

// Credit tops up the account id's wallet by amount (more than 0), once per
// ref.
func (a *Admin) Credit(ctx context.Context, id string, amount Micros, ref string) (CreditResult, error) {
	if amount <= 0 {
		return CreditResult{}, badRequest("amount must be more than 0")
	}
	c, applied, err := a.cfg.Store.Credit(ctx, id, amount, ref, a.cfg.Now())
	if err != nil {
		return CreditResult{}, err
	}
	acc, err := a.cfg.Store.Account(ctx, c.AccountID)
	if err != nil {
		return CreditResult{}, err
	}
	return CreditResult{c, applied, acc.Balance + acc.Leased}, nil
}

// SetPrice sets what the account id pays for a lookup of kind ("" for the
// default prices) and returns its prices.
func (a *Admin) SetPrice(ctx context.Context, id string, kind Kind, price Micros) (Prices, error) {
	if err := a.cfg.Store.SetPrice(ctx, id, kind, price); err != nil {
		return nil, err
	}
	return a.cfg.Store.Prices(ctx, id)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *Admin) status(st Status) func(*http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		acc, err := a.SetStatus(r.Context(), r.PathValue("id"), st)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, accountBody(acc), nil
	}
}

func (a *Admin) keys(r *http.Request) (int, any, error) {
	keys, err := a.cfg.Store.Keys(r.Context(), r.PathValue("id"))
	return http.StatusOK, map[string]any{"keys": bodies(keys, keyBody)}, err
}

// NewKeyView is a new key: the record, and the key itself, shown once.
type NewKeyView struct {
	keyJSON
	Key string `json:"key"`
}

func (a *Admin) newKey(r *http.Request) (int, any, error) {
	var req struct {
		Label     string `json:"label"`
		RateLimit *int   `json:"rate_limit"`
	}
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	limit := 0
	if req.RateLimit != nil {
		if *req.RateLimit < 0 {
			return 0, nil, badRequest("rate_limit must not be negative (0: the server's default)")
		}
		limit = *req.RateLimit
	}
	k, text, err := a.NewKey(r.Context(), r.PathValue("id"), req.Label, limit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, NewKeyView{keyBody(k), text}, nil
}

func (a *Admin) revoke(r *http.Request) (int, any, error) {
	k, err := a.RevokeKey(r.Context(), r.PathValue("id"), r.PathValue("key"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, keyBody(k), nil
}

// CreditView is the answer to a top-up.
type CreditView struct {
	creditJSON
	Applied bool   `json:"applied"` // false: ref was credited before, nothing changed
	Balance Micros `json:"balance_micros"`
}

func (a *Admin) credit(r *http.Request) (int, any, error) {
	var req struct {
		Amount amount `json:"amount"`
		Ref    string `json:"ref"`
	}
	m, err := decodeAmount(r, &req, &req.Amount, "amount")
	if err != nil {
		return 0, nil, err
	}
	c, err := a.Credit(r.Context(), r.PathValue("id"), m, req.Ref)
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusCreated
	if !c.Applied {
		status = http.StatusOK
	}
	return status, CreditView{creditBody(c.Credit), c.Applied, c.Balance}, nil
}

func (a *Admin) prices(r *http.Request) (int, any, error) {
	p, err := a.cfg.Store.Prices(r.Context(), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"prices": PriceList(p)}, nil
}

func (a *Admin) setPrice(r *http.Request) (int, any, error) {
	kind := Kind(r.PathValue("kind"))
	if !kind.Valid() {
		return 0, nil, &apiErr{http.StatusNotFound, "Not found", "NOT_FOUND", fmt.Sprintf("no billable kind %q: the kinds are %v", kind, Kinds)}
	}
	var req struct {
		Price amount `json:"price"`
	}
	p, err := decodeAmount(r, &req, &req.Price, "price")
	if err != nil {
		return 0, nil, err
	}
	prices, err := a.SetPrice(r.Context(), r.PathValue("id"), kind, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"prices": PriceList(prices)}, nil
}

func (a *Admin) usage(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	month, err := ParseMonth(q.Get("month"))
	if err != nil {
		return 0, nil, badRequest("month=YYYY-MM is required")
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		return 0, nil, badRequest("format must be json or csv")
	}
	rows, err := a.cfg.Store.Usage(r.Context(), q.Get("account"), month)
	if err != nil {
		return 0, nil, err
	}
	if format == "csv" {
		return http.StatusOK, UsageCSV(rows), nil
	}
	return http.StatusOK, map[string]any{"month": month, "usage": nonNil(rows)}, nil
}

// UsageCSV writes ledger rows as CSV with a header line.
func UsageCSV(rows []UsageRow) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"account_id", "day", "kind", "lookups", "free", "amount_micros", "amount_usd"})
	for _, u := range rows {
		_ = w.Write([]string{u.AccountID, u.Day, string(u.Kind), strconv.FormatInt(u.Lookups, 10), strconv.FormatInt(u.Free, 10), strconv.FormatInt(int64(u.Amount), 10), u.Amount.String()})
	}
	w.Flush()
	return b.Bytes()
}
