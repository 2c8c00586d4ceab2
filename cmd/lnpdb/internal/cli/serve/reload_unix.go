//go:build unix

package serve

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// notifyReload sends SIGHUP to c: reload the table, the keys files and the
// TLS pair.
func notifyReload(c chan<- os.Signal, _ *slog.Logger) { signal.Notify(c, syscall.SIGHUP) }
