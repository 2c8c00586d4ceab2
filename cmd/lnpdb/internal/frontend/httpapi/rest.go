package httpapi

import (
	"context"
	"errors"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"log/slog"
	"net/http"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// lrnRequest is the body of POST /api/v1/lrn. A null field counts as absent.
type lrnRequest struct {
	PhoneNumber        *string `json:"phone_number"`
	IncludeEnhancedLRN bool    `json:"include_enhanced_lrn"`
	MessagingLookup    bool    `json:"messaging_lookup"`
}

// phoneRequest is the body of the other lookups.
type phoneRequest struct {
	PhoneNumber *string `json:"phone_number"`
}

// The lookup kinds, as metrics and Accounts name them.
const (
	kindLRN       = "lrn"
	kindCNAM      = "cnam"
	kindMessaging = "messaging"
	kindTrust     = "trust"
)

// begin runs what every REST lookup does before looking up: authorize,
// decode the body into req, find the table. When it returns nil it has
// written the response.
func (h *Handler) begin(w *recorder, r *http.Request, req any, phone **string) (*format.DB, auth.Key) {
	key, ok := h.authorize(w, r)
	if !ok {
		return nil, key
	}
	if e := decodeBody(w, r, req); e != nil {
		writeError(w, e)
		return nil, key
	}
	if *phone == nil {
		writeError(w, errNoPhone)
		return nil, key
	}
	db := h.tables.DB()
	if db == nil {
		writeError(w, errUnavailable)
	}
	return db, key
}

func (h *Handler) restLRN(w *recorder, r *http.Request) {
	req := &w.lrnReq
	db, key := h.begin(w, r, req, &req.PhoneNumber)
	if db == nil {
		return
	}
	err := lrn.LookupInto(db, *req.PhoneNumber, lrn.Options{Enhanced: req.IncludeEnhancedLRN, Messaging: req.MessagingLookup}, &w.lrnRes)
	if h.finish(w, r, key, kindLRN, lrnCharge(req.IncludeEnhancedLRN, req.MessagingLookup), err) {
		writeLRN(w, &w.lrnRes)
	}
}

func (h *Handler) restCNAM(w *recorder, r *http.Request) {
	restPhone(h, w, r, kindCNAM, &w.cnamRes, func(db *format.DB, number string, res *cnam.Result) error {
		return cnam.LookupInto(db, number, cnam.Options{}, res)
	})
}

func (h *Handler) restMessaging(w *recorder, r *http.Request) {
	restPhone(h, w, r, kindMessaging, &w.msgRes, func(db *format.DB, number string, res *messaging.Result) error {
		return messaging.LookupInto(db, number, messaging.Options{}, res)
	})
}

func (h *Handler) restTrust(w *recorder, r *http.Request) {
	restPhone(h, w, r, kindTrust, &w.trustRes, func(db *format.DB, number string, res *trust.Result) error {
		return trust.LookupInto(db, number, trust.Options{Now: h.now()}, res)
	})
}

// restPhone answers a lookup of kind whose body is only the number: CNAM,
// messaging and trust. The answer goes to *res, the recorder's own, so that
// it is not allocated per request.
func restPhone[R any](h *Handler, w *recorder, r *http.Request, kind string, res *R, lookup func(*format.DB, string, *R) error) {
	req := &w.phoneReq
	db, key := h.begin(w, r, req, &req.PhoneNumber)
	if db == nil {
		return
	}
	err := lookup(db, *req.PhoneNumber, res)
	if h.finish(w, r, key, kind, kind, err) {
		writeJSON(w, http.StatusOK, res)
	}
}

// finish counts a lookup's outcome, charges an answered one, and reports
// whether the caller should write the answer; when not, it has written the
// error.
func (h *Handler) finish(w *recorder, r *http.Request, key auth.Key, kind, charge string, err error) bool {
	if err == nil {
		err = h.charge(r.Context(), w, key, charge)
	}
	e := h.lookupError(r.Context(), kind, err)
	if e != nil {
		writeError(w, e)
		return false
	}
	return true
}

// charge pays for an answered lookup when accounts are enabled; w holds
// the payment until the answer is written (recorder.settle).
func (h *Handler) charge(ctx context.Context, w *recorder, key auth.Key, kind string) error {
	if h.accounts == nil {
		return nil
	}
	p, err := h.accounts.Charge(ctx, key, kind)
	if err == nil {
		w.hold(p)
		return nil
	}
	if !errors.Is(err, ErrInsufficientBalance) {
		h.log.LogAttrs(ctx, slog.LevelError, "charging a lookup failed",
			slog.String("lookup", kind), slog.String("key", key.ID()), slog.String("error", err.Error()))
		return errAccounts
	}
	return err
}

// errAccounts stands for a failure of Accounts other than an empty wallet:
// the answer is withheld with 503 STORAGE_UNAVAILABLE.
var errAccounts = errors.New("httpapi: accounts unavailable")

// lookupError counts a lookup's outcome and maps its error to the answer
// (nil for success). An error that no client input explains is logged.
func (h *Handler) lookupError(ctx context.Context, kind string, err error) *apiError {
	e, result := errorOf(err)
	if result == resultError {
		h.log.LogAttrs(ctx, slog.LevelError, "lookup failed",
			slog.String("lookup", kind), slog.String("error", err.Error()))
	}
	if h.metrics != nil {
		h.metrics.lookup(kind, result)
	}
	return e
}

// resultError is errorOf's result of an error no client input explains.
const resultError = "error"

// errorOf maps a lookup's error to the answer (nil for success) and the
// outcome the metrics count.
func errorOf(err error) (*apiError, string) {
	switch {
	case err == nil:
		return nil, "ok"
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		return invalidNumber(err), "invalid_number"
	case errors.Is(err, lnpdb.ErrNotFound):
		return errNumberNotFound, "not_found"
	case errors.Is(err, ErrInsufficientBalance):
		e := errInsufficientBalance
		var d interface{ Details() string }
		if errors.As(err, &d) {
			e = &apiError{e.status, errorBody{e.body.Error, e.body.Code, d.Details()}}
		}
		return e, "insufficient_balance"
	case errors.Is(err, lnpdb.ErrClosed):
		return errUnavailable, "unavailable"
	case errors.Is(err, errAccounts):
		return errAccountsStore, "accounts_unavailable"
	}
	return errInternal, resultError
}

// usage serves GET /api/v1/usage: the caller's account's usage.
func (h *Handler) usage(u UsageReporter) func(*recorder, *http.Request) {
	return func(w *recorder, r *http.Request) {
		key, ok := h.authorize(w, r)
		if !ok {
			return
		}
		v, err := u.Usage(r.Context(), key)
		if err != nil {
			h.log.LogAttrs(r.Context(), slog.LevelError, "reporting usage failed",
				slog.String("key", key.ID()), slog.String("error", err.Error()))
			writeError(w, errAccountsUnavailable)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}
