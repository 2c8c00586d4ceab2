//go:build !unix

package serve

import (
	"log/slog"
	"os"
	"runtime"
)

// notifyReload says, once at start, that this system has no SIGHUP: the
// table still reloads when --watch sees its file replaced, but the keys
// files and the TLS pair are read only at start.
func notifyReload(_ chan<- os.Signal, log *slog.Logger) {
	log.Warn("no SIGHUP on this system: the table reloads when --watch sees its file replaced; keys files and the TLS certificate are read only at start (restart to change them)",
		"os", runtime.GOOS)
}
