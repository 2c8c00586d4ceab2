package serve

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/pgschema"
)

// updateLogFlags are serve's flags for following a shared update log.
type updateLogFlags struct {
	dsn, node, schema string
	follower          *updatelog.Follower
}

func (u *updateLogFlags) check() error {
	if u.dsn == "" {
		switch {
		case u.node != "":
			return fmt.Errorf("%w: --node names this node in --updates-log, which is missing", cliutil.ErrUsage)
		case u.schema != "":
			return fmt.Errorf("%w: --updates-log-schema names the schema of --updates-log, which is missing", cliutil.ErrUsage)
		}
		return nil
	}
	if u.schema != "" {
		if err := pgschema.CheckSchema(u.schema); err != nil {
			return fmt.Errorf("%w: --updates-log-schema: %v", cliutil.ErrUsage, err)
		}
	}
	if !strings.HasPrefix(u.dsn, "postgres://") && !strings.HasPrefix(u.dsn, "postgresql://") {
		return fmt.Errorf("%w: --updates-log takes postgres://…", cliutil.ErrUsage)
	}
	return nil
}

// start follows the log into the table; ln is the HTTP listener, whose
// port names the node when --node is not given. While PostgreSQL cannot be
// reached the node starts all the same: lookups from its table, updates
// refused until the log is reachable.
func (u *updateLogFlags) start(s *serveRun, ln net.Listener) error {
	if u.dsn == "" {
		return nil
	}
	if u.node == "" {
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		u.node = host + ":" + port
	}
	var err error
	if u.follower, err = updatelog.Start(updatelog.Config{
		DSN: u.dsn, Schema: u.schema, DB: s.db, Node: u.node, Logger: s.log,
		Applied: s.lv.Applied, Registerer: s.reg,
	}); err != nil {
		return err
	}
	s.onClose(u.follower.Stop) // after the front ends stop, before the table closes
	st := u.follower.Status()
	s.log.Info("following the shared update log", "node", u.node, "log", u.follower.LogID(), "applied_seq", st.AppliedSeq,
		"postgres", st.Postgres, "state", updatelog.StatePath(s.db.Path()))
	return nil
}
