package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/jsonbody"
)

// The Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far a webhook-timestamp may be from the verifier's
// clock, either way, for [Verify] to accept it.
const Tolerance = 5 * time.Minute

const secretPrefix = "whsec_"

// The errors of [Verify] and [ParseSecret].
var (
	ErrSecret    = errors.New("webhook: secret is not whsec_ followed by base64")
	ErrHeaders   = errors.New("webhook: missing or malformed webhook headers")
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	ErrSignature = errors.New("webhook: no matching signature")
)

// NewSecret returns a new signing secret: whsec_ and the base64 of 32
// random bytes.
func NewSecret() string {
	return secretPrefix + base64.StdEncoding.EncodeToString(random(32))
}

// NewID returns a new webhook-id: msg_ and 16 random bytes in hex.
func NewID() string {
	return fmt.Sprintf("msg_%x", random(16))
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// ParseSecret returns the key of secret, whsec_ and the key in standard
// base64, padded or not (the prefix may be left off).
func ParseSecret(secret string) ([]byte, error) {
	b64 := strings.TrimPrefix(secret, secretPrefix)
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(b64)
	}
	if err != nil || len(key) == 0 {
		return nil, ErrSecret
	}
	return key, nil
}

// Sign returns the webhook-signature header value for id, timestamp and
// body under key: v1, and the base64 of HMAC-SHA256(key, id.timestamp.body).
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, timestamp, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// SetHeaders sets the three Standard Webhooks headers of a request
// carrying body.
func SetHeaders(h http.Header, key []byte, id string, at time.Time, body []byte) {
	ts := at.Unix()
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, Sign(key, id, ts, body))
}

// Verify checks a received webhook as a receiver should: the headers are
// present, the timestamp is within [Tolerance] of now, and one of the
// space-separated signatures is v1 and that of the body under key, as
// Sign writes it. Other versions' signatures are skipped. It returns nil or one of
// [ErrHeaders], [ErrTimestamp], [ErrSignature] (wrapped).
func Verify(key []byte, h http.Header, body []byte, now time.Time) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp %q is not unix seconds", ErrHeaders, tsText)
	}
	tol := int64(Tolerance / time.Second)
	if n := now.Unix(); ts < n-tol || ts > n+tol {
		return fmt.Errorf("%w: %d is not within %v of %d", ErrTimestamp, ts, Tolerance, n)
	}
	want := []byte(Sign(key, id, ts, body))
	for sig := range strings.FieldsSeq(sigs) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrSignature
}

// Event is the payload of every webhook: its type (job.completed,
// job.failed, …), when it happened, and its data.
type Event struct {
	Type      string     `json:"type"`
	Timestamp lnpdb.Time `json:"timestamp"`
	Data      any        `json:"data"`
}

// NewEvent returns the JSON body of an event of type typ at at (to the
// second), whose data is data, in the style of every body the server
// writes.
func NewEvent(typ string, at time.Time, data any) ([]byte, error) {
	var b bytes.Buffer
	err := jsonbody.NewEncoder(&b).Encode(Event{Type: typ, Timestamp: lnpdb.Time{Time: at.UTC().Truncate(time.Second)}, Data: data})
	if err != nil {
		return nil, fmt.Errorf("webhook: event: %w", err)
	}
	return b.Bytes(), nil
}
