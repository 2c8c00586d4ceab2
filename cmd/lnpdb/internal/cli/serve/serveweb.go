package serve

import (
	"context"
	"net/http"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/account"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
)

// withWebUI puts the web interface (package webui) in front of h for the
// paths it owns: /account with an accounts store, /console with admin
// keys, unless --console=false.
func (s *serveRun) withWebUI(h http.Handler) (http.Handler, error) {
	cfg := webui.Config{Secure: s.tls != nil || s.f.secureCookies, Logger: s.log}
	if s.acc != nil {
		cfg.Customer = s.acc.realm()
		// Accounts in PostgreSQL keep the sessions there too, for every
		// node of the store: a bbolt store is one node's.
		if shared, ok := s.acc.store.(webui.SessionStore); ok {
			cfg.Store = shared
		}
	}
	if s.keys.admin != nil {
		cfg.Admin = adminRealm(s.keys.admin)
	}
	if !s.f.webUI || (cfg.Customer == nil && cfg.Admin == nil) {
		return h, nil
	}
	ui, err := webui.New(cfg)
	if err != nil {
		return nil, err
	}
	// Each area registers its pages on ui here: /account where there are
	// customers, /console where there are admins.
	if cfg.Admin != nil {
		if err := s.registerConsole(ui); err != nil {
			return nil, err
		}
	}
	if s.acc != nil {
		b := s.acc
		err := account.Register(account.Config{
			UI: ui, Store: b.store, Engine: b.engine, API: h, DefaultLimit: s.f.limit,
			NewKey: cliutil.NewStoreKey,
			Changed: func(ctx context.Context) {
				if err := b.engine.ReloadKeys(ctx); err != nil {
					s.log.Error("reloading keys after a change on the account pages", "error", err)
				}
			},
			Jobs:         b.jobs,
			StoreTimeout: b.storeTimeout, Logger: s.log,
		})
		if err != nil {
			return nil, err
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webui.Owns(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// realm is the web interface's customers: the valid keys of active
// accounts, as the API authenticates them, asked again on every page.
func (b *billed) realm() *webui.Realm {
	return &webui.Realm{
		SignIn: func(key string) (webui.Identity, error) {
			rec, ok := b.engine.Authenticate(key)
			if !ok {
				if b.engine.Suspended(key) {
					return webui.Identity{}, webui.ErrSuspended
				}
				return webui.Identity{}, webui.ErrUnknownKey
			}
			return webui.Identity{KeyHash: rec.Hash, KeyID: rec.ID, AccountID: rec.AccountID, Limit: rec.Limit}, nil
		},
		Valid: func(id webui.Identity) bool {
			rec, ok := b.engine.Lookup(id.KeyHash)
			return ok && rec.AccountID == id.AccountID
		},
	}
}

// adminKeys is what the web interface needs of --admin-keys.
type adminKeys interface {
	Authenticate(token string) (auth.Key, bool)
	Has(h [32]byte) bool
}

// adminRealm is the web interface's admins: the keys of --admin-keys now
// in force (a key removed from the file and reloaded ends its sessions).
func adminRealm(keys adminKeys) *webui.Realm {
	return &webui.Realm{
		SignIn: func(key string) (webui.Identity, error) {
			k, ok := keys.Authenticate(key)
			if !ok {
				return webui.Identity{}, webui.ErrUnknownKey
			}
			return webui.Identity{KeyHash: k.Hash, KeyID: k.ID(), Limit: k.Limit}, nil
		},
		Valid: func(id webui.Identity) bool { return keys.Has(id.KeyHash) },
	}
}
