package serve

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
)

// newServeLog returns serve's logger, writing through out in format (text
// or json) the records of level (debug, info, warn or error) and above,
// and makes out's notice of dropped lines a record of the same format, so
// that a log shipper parses it like any other line.
func newServeLog(out *httpapi.LogWriter, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || !slices.Contains([]string{"debug", "info", "warn", "error"}, strings.ToLower(level)) {
		return nil, fmt.Errorf("%w: --log-level must be debug, info, warn or error", cliutil.ErrUsage)
	}
	opts := httpapi.LogOptions(lv)
	newHandler := func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
	switch format {
	case "text":
	case "json":
		newHandler = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }
	default:
		return nil, fmt.Errorf("%w: --log-format must be text or json", cliutil.ErrUsage)
	}
	out.SetDropNotice(func(dropped uint64) []byte {
		var b bytes.Buffer
		slog.New(newHandler(&b)).Warn("log output too slow: lines dropped", "dropped", dropped)
		return b.Bytes()
	})
	return slog.New(newHandler(out)), nil
}
