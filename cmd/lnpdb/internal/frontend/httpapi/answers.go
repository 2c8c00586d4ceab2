package httpapi

import (
	"errors"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// The lookup kinds of AnswerJob and AppendAnswers.
var jobLookups = map[string]bool{kindLRN: true, kindCNAM: true, kindMessaging: true, kindTrust: true}

// AnswerOptions say what AppendAnswers looks up.
type AnswerOptions struct {
	// Kind is lrn, cnam, messaging or trust.
	Kind string
	// Enhanced and Messaging are the LRN options (include_enhanced_lrn,
	// messaging_lookup).
	Enhanced, Messaging bool
	// Now is trust's clock; the zero time is the time of the call.
	Now time.Time
}

// ErrUnknownKind is AppendAnswers' refusal of a kind it does not answer.
var ErrUnknownKind = errors.New("httpapi: unknown lookup kind")

// AppendAnswers looks numbers up in db and appends to buf the body the
// single-number REST endpoint of o.Kind answers for each, one after
// another, without new lines: the lines of a lookup job's results
// (Handler.AnswerJob) and of lnpdb lookup, rendered without a server.
// ends[i] is where numbers[i]'s body ends in the returned buffer (it
// starts where the previous one ends, or at len(buf)), answered[i] says
// it is a success; both must be len(numbers) long. An invalid or unknown
// number's body is its error body; failed, when not nil, is told of each
// lookup that failed otherwise (its body is that failure's error body). LRN
// numbers are looked up in one batch (lrn.LookupMany).
func AppendAnswers(buf []byte, db *format.DB, o AnswerOptions, numbers []string, ends []int, answered []bool, failed func(i int, err error)) ([]byte, error) {
	if !jobLookups[o.Kind] {
		return buf, ErrUnknownKind
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	return appendAnswers(buf, db, o, numbers, ends, answered, func(i int, err error) *apiError {
		e, result := errorOf(err)
		switch result {
		case "ok", "invalid_number", "not_found":
		default:
			if failed != nil {
				failed(i, err)
			}
		}
		return e
	}), nil
}

// appendAnswers is AppendAnswers with errorOf giving each answer's error
// body (nil for a success): the handler's counts and logs them.
func appendAnswers(buf []byte, db *format.DB, o AnswerOptions, numbers []string, ends []int, answered []bool, errorOf func(i int, err error) *apiError) []byte {
	j := jsonBufs.Get().(*jsonBuf)
	defer jsonBufs.Put(j)
	add := func(i int, err error, ok func([]byte) []byte) {
		if e := errorOf(i, err); e != nil {
			buf = appendErrorBody(buf, e)
			answered[i] = false
		} else {
			buf = ok(buf)
			answered[i] = true
		}
		ends[i] = len(buf)
	}
	encode := func(v any) func([]byte) []byte {
		return func(b []byte) []byte {
			j.b.Reset()
			_ = j.enc.Encode(v) // plain structs: never fails
			return append(b, strings.TrimSuffix(j.b.String(), "\n")...)
		}
	}
	switch o.Kind {
	case kindLRN:
		answers := lrn.LookupMany(db, numbers, lrn.Options{Enhanced: o.Enhanced, Messaging: o.Messaging}, nil)
		for i := range answers {
			add(i, answers[i].Err, func(b []byte) []byte { return appendLRN(b, &answers[i].Result) })
		}
	case kindCNAM:
		var res cnam.Result
		for i, n := range numbers {
			add(i, cnam.LookupInto(db, n, cnam.Options{}, &res), encode(&res))
		}
	case kindMessaging:
		var res messaging.Result
		for i, n := range numbers {
			add(i, messaging.LookupInto(db, n, messaging.Options{}, &res), encode(&res))
		}
	case kindTrust:
		var res trust.Result
		for i, n := range numbers {
			add(i, trust.LookupInto(db, n, trust.Options{Now: o.Now}, &res), encode(&res))
		}
	}
	return buf
}
