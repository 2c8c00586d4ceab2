package serve

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

// serveTLS holds the certificate of `serve --tls-cert --tls-key`, which
// SIGHUP reloads: a renewed certificate is served without a restart, and
// a bad one is logged while the previous keeps serving.
type serveTLS struct {
	certFile, keyFile string
	log               *slog.Logger
	cur               atomic.Pointer[tls.Certificate]
}

// newServeTLS loads the pair, or returns nil when neither file is named.
func newServeTLS(certFile, keyFile string, log *slog.Logger) (*serveTLS, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("%w: --tls-cert and --tls-key go together", cliutil.ErrUsage)
	}
	t := &serveTLS{certFile: certFile, keyFile: keyFile, log: log}
	if err := t.load(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *serveTLS) load() error {
	c, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", t.certFile, t.keyFile, err)
	}
	t.cur.Store(&c)
	return nil
}

// reload reads the pair again; nil-safe, for a server without TLS.
func (t *serveTLS) reload() {
	if t == nil {
		return
	}
	if err := t.load(); err != nil {
		t.log.Error("TLS certificate not reloaded; the previous one keeps serving", "error", err.Error())
		return
	}
	t.log.Info("TLS certificate reloaded", "cert", t.certFile)
}

// configure sets srv up for HTTP/2: over TLS with t (ALPN h2 and
// http/1.1), and in cleartext (h2c, prior knowledge) when h2c is set.
func (t *serveTLS) configure(srv *http.Server, h2c bool) {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(t != nil)
	p.SetUnencryptedHTTP2(h2c)
	srv.Protocols = &p
	if t != nil {
		srv.TLSConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				return t.cur.Load(), nil
			},
		}
	}
}

// corsOrigins splits --cors-origin's comma-separated list.
func corsOrigins(s string) ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(s, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return nil, fmt.Errorf("%w: --cors-origin %q: an origin is * or scheme://host[:port]", cliutil.ErrUsage, o)
		}
		out = append(out, strings.TrimSuffix(o, "/"))
	}
	return out, nil
}
