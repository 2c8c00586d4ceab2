package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/lnpdb/lnpdb/internal/updatelog"
)

// updateLogFlags are serve's flags for following a shared update log.
type updateLogFlags struct {
	dsn, node string
	follower  *updatelog.Follower
}

func (u *updateLogFlags) check() error {
	if u.dsn == "" {
		if u.node != "" {
			return fmt.Errorf("%w: --node names this node in --updates-log, which is missing", errUsage)
		}
		return nil
	}
	if !strings.HasPrefix(u.dsn, "postgres://") && !strings.HasPrefix(u.dsn, "postgresql://") {
		return fmt.Errorf("%w: --updates-log takes postgres://…", errUsage)
	}
	return nil
}

// start opens the log and follows it into the table; ln is the HTTP
// listener, whose port names the node when --node is not given.
func (u *updateLogFlags) start(ctx context.Context, s *serveRun, ln net.Listener) error {
	if u.dsn == "" {
		return nil
	}
	l, err := updatelog.Open(ctx, u.dsn)
	if err != nil {
		return err
	}
	s.onClose(l.Close)
	if u.node == "" {
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		u.node = host + ":" + port
	}
	if u.follower, err = updatelog.Start(updatelog.Config{
		Log: l, DB: s.db, Node: u.node, Logger: s.log,
		Applied: s.lv.Applied, Registerer: s.reg,
	}); err != nil {
		return err
	}
	s.onClose(u.follower.Stop) // before the log closes, after the table's users stop
	st := u.follower.Status()
	s.log.Info("following the shared update log", "node", u.node, "log", l.ID(), "applied_seq", st.AppliedSeq,
		"state", updatelog.StatePath(s.db.Path()))
	return nil
}
