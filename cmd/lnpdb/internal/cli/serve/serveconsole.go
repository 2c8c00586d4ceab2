package serve

import (
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/console"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/format"
)

// registerConsole registers the operator console's pages on ui: what this
// server serves and, with an accounts store, its accounts.
func (s *serveRun) registerConsole(ui *webui.UI) error {
	cfg := console.Config{
		Table:   func() format.Info { return s.db.Info() },
		Live:    s.lv.Status,
		Pull:    s.f.pull.status(),
		Redis:   s.redis,
		History: s.history,
		Logger:  s.log,
	}
	if fl := s.f.updates.follower; fl != nil {
		cfg.UpdateLog = func() updatelog.Status { return fl.Status() }
	}
	if s.accAdmin != nil {
		cfg.Accounts = s.accAdmin
	}
	return console.Register(ui, cfg)
}
