package httpapi

import (
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// accessRecord is the access log's record of a finished request: "request",
// at the time it ended, with the method, path, status, duration, bytes,
// key id, remote address, request id and, for a traced request, its W3C
// trace-id and span-id.
func accessRecord(rec *recorder, r *http.Request, end time.Time, d time.Duration) slog.Record {
	lr := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	lr.AddAttrs(
		slog.String("method", clip(r.Method)),
		slog.String("path", clip(r.URL.Path)),
		slog.Int("status", rec.status),
		slog.Duration("duration", d),
		slog.Int("bytes", rec.bytes),
		slog.String("key", rec.keyID),
		slog.String("remote", r.RemoteAddr))
	if id := r.Header["X-Request-Id"]; len(id) > 0 {
		lr.AddAttrs(slog.String("request_id", clip(id[0])))
	}
	if rec.traced {
		lr.AddAttrs(slog.String("trace_id", rec.traceID.String()), slog.String("span_id", rec.spanID.String()))
	}
	return lr
}

// appendAccessJSON appends accessRecord's line as slog.NewJSONHandler(w,
// LogOptions(nil)) writes it, byte for byte, when every string in it is plain
// printable ASCII and the year has four digits, as in nearly every request;
// otherwise it returns false, and the line goes through slog, whose
// escaping is its own. slog's generic encoding (attributes, escaping, a
// pooled state) costs a few per cent of a single lookup's CPU under load;
// this costs a tenth of that.
func appendAccessJSON(b []byte, rec *recorder, r *http.Request, end time.Time, d time.Duration) ([]byte, bool) {
	method, path, remote := clip(r.Method), clip(r.URL.Path), r.RemoteAddr
	v := r.Header["X-Request-Id"]
	id := ""
	if len(v) > 0 {
		id = clip(v[0])
	}
	if y := end.Year(); y < 0 || y >= 10000 || !plainASCII(method) || !plainASCII(path) ||
		!plainASCII(rec.keyID) || !plainASCII(remote) || !plainASCII(id) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = end.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":"`...)
	b = append(b, method...)
	b = append(b, `","path":"`...)
	b = append(b, path...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(rec.status), 10)
	b = append(b, `,"duration":"`...)
	b = append(b, d.String()...) // as LogOptions writes it
	b = append(b, `","bytes":`...)
	b = strconv.AppendInt(b, int64(rec.bytes), 10)
	b = append(b, `,"key":"`...)
	b = append(b, rec.keyID...)
	b = append(b, `","remote":"`...)
	b = append(b, remote...)
	if len(v) > 0 {
		b = append(b, `","request_id":"`...)
		b = append(b, id...)
	}
	if rec.traced {
		b = append(b, `","trace_id":"`...)
		b = hex.AppendEncode(b, rec.traceID[:])
		b = append(b, `","span_id":"`...)
		b = hex.AppendEncode(b, rec.spanID[:])
	}
	return append(b, "\"}\n"...), true
}

// plainASCII reports whether s is printable ASCII without '"' or '\\':
// what every JSON encoder writes as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// LogOptions are the options of the server's log handlers, text and JSON:
// records below level (nil: info) are left out, and a duration is written
// as Go writes it, "1.5s" or "250µs", in JSON as in text, rather than as
// slog's JSON count of nanoseconds, which no reader takes for a time.
func LogOptions(level slog.Leveler) *slog.HandlerOptions {
	return &slog.HandlerOptions{Level: level, ReplaceAttr: durationText}
}

func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
