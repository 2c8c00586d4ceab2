package serve

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

// serveKeys are serve's lookup keys (--keys, plus a development key) and
// admin keys (--admin-keys, nil without the admin API). Both files are read
// again on SIGHUP.
type serveKeys struct {
	lookup, admin *auth.KeyFile
}

// loadServeKeys reads the keys files; dev, when set, is a development key
// accepted beside --keys. With neither --keys nor dev there are no lookup
// keys (an accounts store authenticates). One file cannot be both: every lookup key would
// then also be an admin key, able to change the routing data.
func loadServeKeys(keysPath, adminPath string, dev *auth.Key) (*serveKeys, error) {
	if keysPath != "" && adminPath != "" {
		same, err := sameFile(keysPath, adminPath)
		if err != nil {
			return nil, err
		}
		if same {
			return nil, fmt.Errorf("%w: --keys and --admin-keys name the same file (%s): every lookup key would be an admin key; give admins a keys file of their own (lnpdb key new --keys ADMIN_FILE)", cliutil.ErrUsage, adminPath)
		}
	}
	var extra []auth.Key
	if dev != nil {
		extra = append(extra, *dev)
	}
	k := new(serveKeys)
	var err error
	if keysPath == "" && dev == nil {
		// Lookup keys come from the accounts store.
	} else if k.lookup, err = auth.LoadKeyFile(keysPath, extra...); err != nil {
		if errors.Is(err, auth.ErrNoKeys) {
			return nil, fmt.Errorf("%w: no request could be served (add one with lnpdb key new --keys %s)", err, keysPath)
		}
		return nil, err
	}
	if adminPath != "" {
		if k.admin, err = auth.LoadKeyFile(adminPath); err != nil {
			if errors.Is(err, auth.ErrNoKeys) {
				return nil, fmt.Errorf("%w: leave out --admin-keys to serve without the admin API", err)
			}
			return nil, err
		}
	}
	return k, nil
}

// sameFile reports whether two paths name one file: the same path, or
// links to one file. A path that does not exist is left to the loader's
// error.
func sameFile(a, b string) (bool, error) {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true, nil
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return false, nil
	}
	return os.SameFile(fa, fb), nil
}

// reload reads both keys files again. A file that fails to read or parse
// is logged and its previous keys stay in force; a file that holds no key
// revokes every key it held, which is logged as a warning.
func (k *serveKeys) reload(log *slog.Logger, reason string) {
	for _, f := range []*auth.KeyFile{k.lookup, k.admin} {
		if f == nil || f.Path() == "" {
			continue
		}
		added, removed, err := f.Reload()
		if err != nil {
			log.Error("keys reload failed; the previous keys stay in force", "reason", reason, "file", f.Path(), "keys", f.Len(), "error", err)
			continue
		}
		if f.Len() == 0 {
			log.Warn("keys reloaded: the file holds no key, so every key it held is revoked", "reason", reason, "file", f.Path(), "removed", removed)
			continue
		}
		log.Info("keys reloaded", "reason", reason, "file", f.Path(), "keys", f.Len(), "added", added, "removed", removed)
	}
}

// lookupCount is how many lookup keys the file holds (0 with an accounts
// store, whose keys are its own).
func (k *serveKeys) lookupCount() int {
	if k.lookup == nil {
		return 0
	}
	return k.lookup.Len()
}
