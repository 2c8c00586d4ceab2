package webhook

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Standard Webhooks reference libraries' signing vector.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignVector(t *testing.T) {
	key, err := ParseSecret(vectorSecret)
	require.NoError(t, err)
	assert.Equal(t, vectorSignature, Sign(key, vectorID, vectorTimestamp, []byte(vectorBody)))

	// The prefix may be left off.
	bare, err := ParseSecret(strings.TrimPrefix(vectorSecret, "whsec_"))
	require.NoError(t, err)
	assert.Equal(t, key, bare)
}

func TestParseSecretPadding(t *testing.T) {
	// Secrets written without their base64 padding are taken as the
	// reference libraries take them.
	for _, s := range []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr"} {
		unpadded, err := ParseSecret("whsec_" + s)
		require.NoError(t, err, s)
		pad := strings.Repeat("=", (4-len(s)%4)%4)
		padded, err := ParseSecret("whsec_" + s + pad)
		require.NoError(t, err, s)
		assert.Equal(t, padded, unpadded, s)
	}
	for _, s := range []string{"", "whsec_", "whsec_!!!!", "whsec_a"} {
		_, err := ParseSecret(s)
		assert.ErrorIs(t, err, ErrSecret, s)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	assert.NotEqual(t, a, b)
	key, err := ParseSecret(a)
	require.NoError(t, err)
	assert.Len(t, key, 32)
	assert.True(t, strings.HasPrefix(a, "whsec_"))
}

func vectorHeader() http.Header {
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, strconv.Itoa(vectorTimestamp))
	h.Set(HeaderSignature, vectorSignature)
	return h
}

func TestVerify(t *testing.T) {
	key, err := ParseSecret(vectorSecret)
	require.NoError(t, err)
	at := time.Unix(vectorTimestamp, 0)
	body := []byte(vectorBody)
	tests := []struct {
		name string
		edit func(http.Header)
		now  time.Time
		body string
		want error
	}{
		{name: "valid", now: at},
		{name: "valid at the tolerance's end", now: at.Add(Tolerance)},
		{name: "valid at the tolerance's start", now: at.Add(-Tolerance)},
		{name: "too old", now: at.Add(Tolerance + time.Second), want: ErrTimestamp},
		{name: "too new", now: at.Add(-Tolerance - time.Second), want: ErrTimestamp},
		{name: "no id", edit: func(h http.Header) { h.Del(HeaderID) }, want: ErrHeaders},
		{name: "no timestamp", edit: func(h http.Header) { h.Del(HeaderTimestamp) }, want: ErrHeaders},
		{name: "no signature", edit: func(h http.Header) { h.Del(HeaderSignature) }, want: ErrHeaders},
		{name: "timestamp not a number", edit: func(h http.Header) { h.Set(HeaderTimestamp, "1614265330.0") }, want: ErrHeaders},
		{name: "timestamp out of range", edit: func(h http.Header) { h.Set(HeaderTimestamp, "99999999999999999999") }, want: ErrHeaders},
		{name: "another id", edit: func(h http.Header) { h.Set(HeaderID, "msg_other") }, want: ErrSignature},
		{name: "another body", body: `{"test": 2432232315}`, want: ErrSignature},
		{name: "wrong signature", edit: func(h http.Header) { h.Set(HeaderSignature, "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=") }, want: ErrSignature},
		{name: "empty signature", edit: func(h http.Header) { h.Set(HeaderSignature, "v1,") }, want: ErrSignature},
		{name: "another version", edit: func(h http.Header) { h.Set(HeaderSignature, "v2,"+strings.TrimPrefix(vectorSignature, "v1,")) }, want: ErrSignature},
		{name: "among others", edit: func(h http.Header) {
			h.Set(HeaderSignature, "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= "+vectorSignature+" v1a")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := vectorHeader()
			if tt.edit != nil {
				tt.edit(h)
			}
			now := tt.now
			if now.IsZero() {
				now = at
			}
			b := body
			if tt.body != "" {
				b = []byte(tt.body)
			}
			err := Verify(key, h, b, now)
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestSetHeadersVerify(t *testing.T) {
	key, err := ParseSecret(NewSecret())
	require.NoError(t, err)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"job.completed"}`)
	h := http.Header{}
	SetHeaders(h, key, "msg_1", at, body)
	assert.Equal(t, "msg_1", h.Get(HeaderID))
	assert.Equal(t, strconv.FormatInt(at.Unix(), 10), h.Get(HeaderTimestamp))
	assert.NoError(t, Verify(key, h, body, at))
	other, err := ParseSecret(NewSecret())
	require.NoError(t, err)
	assert.ErrorIs(t, Verify(other, h, body, at), ErrSignature)
}

func TestNewEvent(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.FixedZone("EST", -5*3600))
	body, err := NewEvent("job.completed", at, map[string]any{"id": "job_1", "status": "succeeded", "note": "AT&T"})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"job.completed","timestamp":"2026-03-01T17:00:00+00:00","data":{"id":"job_1","note":"AT&T","status":"succeeded"}}`+"\n", string(body))

	_, err = NewEvent("job.completed", at, func() {})
	assert.Error(t, err)
}

// FuzzVerify checks that Verify answers any headers and body with nil or
// one of its errors, never a panic, and accepts only a signature that is
// the body's.
func FuzzVerify(f *testing.F) {
	f.Add(vectorID, strconv.Itoa(vectorTimestamp), vectorSignature, []byte(vectorBody))
	f.Add("", "", "", []byte(nil))
	f.Add(vectorID, "-1", "v1,", []byte("{}"))
	f.Add(vectorID, "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1", []byte(vectorBody))
	f.Add("a", "1614265330", ",,, v1,,,, v1,=== \t", []byte("x"))
	key, err := ParseSecret(vectorSecret)
	require.NoError(f, err)
	now := time.Unix(vectorTimestamp, 0)
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		err := Verify(key, h, body, now)
		if err != nil {
			if !errors.Is(err, ErrHeaders) && !errors.Is(err, ErrTimestamp) && !errors.Is(err, ErrSignature) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		n, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil {
			t.Fatalf("accepted timestamp %q", ts)
		}
		if !slices.Contains(strings.Fields(sig), Sign(key, id, n, body)) {
			t.Fatalf("accepted %q for a body it does not sign", sig)
		}
	})
}
