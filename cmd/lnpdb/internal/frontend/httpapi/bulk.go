package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lnpdb/lnpdb/lrn"
)

// bulkRequest is the body of POST /api/v1/lrn/bulk. A null number is
// refused (the document says strings); a null flag counts as false.
type bulkRequest struct {
	PhoneNumbers       *[]*string `json:"phone_numbers"`
	IncludeEnhancedLRN bool       `json:"include_enhanced_lrn"`
	MessagingLookup    bool       `json:"messaging_lookup"`

	// numbers holds phone_numbers when decodeBulkFast read them (then
	// fastNumbers is set).
	numbers     []string
	fastNumbers bool
}

var (
	errNoNumbersREST  = invalidRequest("phone_numbers is required")
	errBulkCount      = invalidRequest("phone_numbers must hold 1 to " + strconv.Itoa(MaxBulkNumbers) + " numbers")
	errBulkNotStrings = invalidRequest("phone_numbers must be an array of strings")
)

// bulkState is one bulk request's memory, pooled: the numbers, the answers
// and the response body of a thousand numbers are reused.
type bulkState struct {
	req     bulkRequest
	numbers []string
	answers []lrn.Answer
	out     []byte
}

var bulkStates = newStatePool(func(st *bulkState) bool {
	if cap(st.out) > maxPooledBulk {
		return false
	}
	st.req = bulkRequest{numbers: st.req.numbers[:0]}
	clear(st.numbers)
	clear(st.answers)
	return true
})

// maxPooledBulk keeps an unusually large body's buffer out of the pool.
const maxPooledBulk = 2 << 20

// restLRNBulk answers POST /api/v1/lrn/bulk: one result per number, in
// order, each the body POST /api/v1/lrn would answer for it, its error
// body included. The request counts one lookup per number against the
// key's limit, all before any is made.
func (h *Handler) restLRNBulk(w *recorder, r *http.Request) {
	key, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	st := bulkStates.get()
	defer bulkStates.put(st)
	req := &st.req
	if e := decodeBody(w, r, req); e != nil {
		if strings.HasPrefix(e.body.Details, "phone_numbers ") {
			// encoding/json's words for an element would say "a string".
			e = errBulkNotStrings
		}
		h.refuse(w, r, key, e)
		return
	}
	st.numbers = st.numbers[:0]
	switch {
	case req.PhoneNumbers != nil: // decoded by encoding/json
		for _, p := range *req.PhoneNumbers {
			if p == nil {
				h.refuse(w, r, key, errBulkNotStrings)
				return
			}
			st.numbers = append(st.numbers, *p)
		}
	case req.fastNumbers:
		st.numbers = append(st.numbers, req.numbers...)
	default:
		h.refuse(w, r, key, errNoNumbersREST)
		return
	}
	if len(st.numbers) == 0 || len(st.numbers) > MaxBulkNumbers {
		h.refuse(w, r, key, errBulkCount)
		return
	}
	db := h.tables.DB()
	if db == nil {
		h.refuse(w, r, key, errUnavailable)
		return
	}
	if !h.allowLookups(w, r, key, len(st.numbers)) {
		return
	}
	place, ok := h.inflight.acquire(w, r, key)
	if !ok {
		return
	}
	defer h.inflight.release(place)

	opt := lrn.Options{Enhanced: req.IncludeEnhancedLRN, Messaging: req.MessagingLookup}
	charge := lrnCharge(opt.Enhanced, opt.Messaging)
	st.answers = lrn.LookupMany(db, st.numbers, opt, st.answers[:0])
	b := append(st.out[:0], `{"results":[`...)
	for i := range st.answers {
		if i > 0 {
			b = append(b, ',')
		}
		a := &st.answers[i]
		err := a.Err
		if err == nil {
			err = h.charge(r.Context(), w, key, charge)
		}
		if e := h.lookupError(r.Context(), kindLRN, err); e != nil {
			b = appendErrorBody(b, e)
			continue
		}
		b = appendLRN(b, &a.Result)
	}
	b = append(b, "]}\n"...)
	st.out = b
	hd := w.Header()
	hd["Content-Type"] = hdrJSON
	hd["X-Content-Type-Options"] = hdrNoSniff
	w.WriteHeader(http.StatusOK) // a POST answer: no cache stores it (see recorder.post)
	_, _ = w.Write(b)
}

// appendErrorBody appends e's JSON body as encoding/json writes it.
func appendErrorBody(b []byte, e *apiError) []byte {
	b = append(b, `{"error":`...)
	b = appendString(b, e.body.Error)
	b = append(b, `,"code":`...)
	b = appendString(b, e.body.Code)
	b = append(b, `,"details":`...)
	b = appendString(b, e.body.Details)
	return append(b, '}')
}
