package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
)

// newServeLog returns serve's logger, writing through out in format (text
// or json), and makes out's notice of dropped lines a record of the same
// format, so that a log shipper parses it like any other line.
func newServeLog(out *httpapi.LogWriter, format string) (*slog.Logger, error) {
	newHandler := func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }
	switch format {
	case "text":
	case "json":
		newHandler = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }
	default:
		return nil, fmt.Errorf("%w: --log-format must be text or json", errUsage)
	}
	out.SetDropNotice(func(dropped uint64) []byte {
		var b bytes.Buffer
		slog.New(newHandler(&b)).Warn("log output too slow: lines dropped", "dropped", dropped)
		return b.Bytes()
	})
	return slog.New(newHandler(out)), nil
}
