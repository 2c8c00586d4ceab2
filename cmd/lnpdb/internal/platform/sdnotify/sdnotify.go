// Package sdnotify owns what the server tells its service manager
// (systemd's sd_notify protocol, a datagram to $NOTIFY_SOCKET): that it is
// ready — the table verified and opened, the listeners serving — so that
// a Type=notify unit's start returns then and not before, that it is
// stopping, and the watchdog's keep-alives. Without $NOTIFY_SOCKET (not
// run by systemd, or not Type=notify) every call does nothing.
package sdnotify

import (
	"context"
	"net"
	"os"
	"strconv"
	"time"
)

// The states a server sends.
const (
	Ready    = "READY=1"
	Stopping = "STOPPING=1"
	Watchdog = "WATCHDOG=1"
)

// Status is a free-form status line systemctl status shows.
func Status(s string) string { return "STATUS=" + s }

// Notify sends state to $NOTIFY_SOCKET; nothing, and nil, without one.
func Notify(state string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:] // an abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// WatchdogInterval returns how often the service manager expects a
// keep-alive ($WATCHDOG_USEC, for this process by $WATCHDOG_PID); 0 when
// it expects none.
func WatchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond
}

// RunWatchdog sends a keep-alive at half the watchdog interval while alive
// reports true, until ctx ends; it returns at once without a watchdog.
func RunWatchdog(ctx context.Context, alive func() bool) {
	every := WatchdogInterval() / 2
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if alive() {
				_ = Notify(Watchdog)
			}
		}
	}
}
