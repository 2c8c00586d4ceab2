// Package serve is lnpdb serve: lookups served over REST, GraphQL, SIP, ENUM and pdb, with billing.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/history"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/pgschema"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/sdnotify"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/tracing"
	"github.com/lnpdb/lnpdb/format"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Server limits. Lookups answer in microseconds; the timeouts only bound
// slow or stalled clients.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 16 << 10
	// httpMaxConns caps the HTTP connections open at once (the API's and
	// the metrics' listeners together), and at most half the open-file
	// limit (internal/frontend/sockets): beyond it a connection is closed
	// as it is accepted, so that no number of clients runs the process
	// out of descriptors.
	httpMaxConns    = 16384
	shutdownTimeout = 10 * time.Second
	// GCPercent is the collector's GOGC unless the environment sets one.
	// The table is mapped, not on the heap, which holds the requests in
	// flight: a few MB. At GOGC=100 the collector runs after every 4 MB
	// allocated, dozens of times a second under load; at 400 it runs a
	// quarter as often, and serves about 10 % more single lookups a
	// second, for a heap up to five times what is live
	// (benchmarks/results/http-rest-graphql.md, graphql-amplification.md).
	GCPercent     = 400
	logFlushEvery = 100 * time.Millisecond
)

// serveFlags are serve's command line, checked.
type serveFlags struct {
	dbPath, addr, keysPath, accountsDSN, metricsAddr string
	accountsSchema                                   string
	logFormat, adminKeysPath, tlsCert, tlsKey, cors  string
	logLevel                                         string
	unknownEnv                                       []string // LNPDB_* variables no flag reads
	trustedProxies                                   string
	otlpEndpoint                                     string
	devKey, accessLog, h2c, webUI, secureCookies     bool
	limit, compactAt                                 int
	httpMaxConns, httpPerAddr                        int
	leaseTTL, watchEvery, accountsTimeout            time.Duration
	dips                                             *dipFlags
	redis                                            *redisFlags
	pull                                             pullFlags
	updates                                          updateLogFlags
	jobs                                             *jobsFlags
}

// NewCmdServe returns lnpdb serve.
func NewCmdServe(e *cliutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "serve lookups over REST and GraphQL (no flags: the sample, with a dev key)",
	}
	f := addServeFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.check(cmd.Flags(), args); err != nil {
			return err
		}
		return runServe(cmd.Context(), e, f)
	}
	return cmd
}

// addServeFlags defines serve's flags on fs.
func addServeFlags(fs *pflag.FlagSet) *serveFlags {
	f := &serveFlags{}
	fs.StringVar(&f.dbPath, "db", "", "table `file` to serve (default: build the embedded sample into a temporary directory and serve it)")
	fs.StringVar(&f.addr, "addr", cliutil.DefaultAddr, "`host:port` to listen on")
	fs.StringVar(&f.keysPath, "keys", "", "API keys `file`: sha256:<64 hex>[,<requests per minute>] per line (see lnpdb key new); re-read on SIGHUP")
	config.Secret(fs, &f.accountsDSN, "accounts", "", "bill lookups to the accounts of this store `DSN`, whose keys then authenticate: bolt:///path/accounts.db or postgres://… (see lnpdb account)")
	fs.StringVar(&f.accountsSchema, "accounts-schema", "", "with --accounts postgres://…: keep the store's tables in this PostgreSQL `schema`, created when absent (default: the connection's search_path, normally public)")
	fs.BoolVar(&f.devKey, "dev-key", false, "also accept a development API key generated now and printed once")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve /metrics on this separate `host:port` (default: /metrics on --addr)")
	fs.IntVar(&f.httpMaxConns, "http-max-conns", 0, fmt.Sprintf("close HTTP connections (--addr and --metrics-addr together) accepted beyond this `number` open at once (default %d, at most half the open-file limit)", httpMaxConns))
	fs.IntVar(&f.httpPerAddr, "http-max-conns-per-addr", 0, "close HTTP connections accepted beyond this `number` open at once from one remote address, so that no client takes every place and health checks still connect (default: half of --http-max-conns; --trusted-proxies are exempt)")
	fs.IntVar(&f.limit, "rate-limit", ratelimit.DefaultLimit, "requests per minute for a key without a limit of its own")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log records of this `level` and above: debug, info, warn or error (warn and error leave out the access log)")
	fs.BoolVar(&f.accessLog, "access-log", true, "log every request (method, path, status, duration, key id)")
	fs.StringVar(&f.adminKeysPath, "admin-keys", "", "admin keys `file` (same format as --keys, not the same file; re-read on SIGHUP): enables POST /admin/v1/updates and /admin/v1/compact, and with --accounts the accounts admin API (/admin/v1/accounts…), for these keys only")
	fs.IntVar(&f.compactAt, "compact-at", 100000, "compact in the background once this many numbers have pending updates (0: never)")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", 30*time.Second, "with --accounts: how long credit leased by this process outlives its last sync, and a lookup job's chunk stays claimed by it (what a killed process held stays out this long)")
	fs.DurationVar(&f.accountsTimeout, "accounts-timeout", billing.DefaultStoreTimeout, "with --accounts: how long a lookup waits for the accounts store when this process's lease of the account's credit is spent; past it the lookup answers 503 STORAGE_UNAVAILABLE, uncharged (must be under the 10s write timeout)")
	fs.DurationVar(&f.watchEvery, "watch", time.Second, "check the table file for a replacement every `interval` and reload it (0: only on SIGHUP)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate `file` (PEM, chain first); SIGHUP reloads it")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key `file` (PEM) of --tls-cert")
	fs.BoolVar(&f.h2c, "h2c", false, "also accept HTTP/2 without TLS (prior knowledge), e.g. behind a proxy")
	fs.StringVar(&f.cors, "cors-origin", "", "let browsers of these comma-separated `origins` (or *) call the API (default: no CORS)")
	fs.StringVar(&f.trustedProxies, "trusted-proxies", "", "believe X-Forwarded-For from these comma-separated `addresses and CIDR prefixes` (the reverse proxies or load balancers in front): the client's address is then its last entry that is not one of them (default: the header is ignored)")
	fs.BoolVar(&f.webUI, "console", true, "serve the web interface: /account for the key holders of --accounts, /console for --admin-keys (false: the API alone)")
	fs.BoolVar(&f.secureCookies, "secure-cookies", false, "the web interface is reached over HTTPS: mark its cookies Secure, name them __Host-… and take forms from https:// origins only, whatever the request arrived on (for a TLS-terminating proxy that sends no X-Forwarded-Proto; implied by --tls-cert; a request with X-Forwarded-Proto: https from --trusted-proxies is treated so anyway)")
	fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "send OpenTelemetry traces of the HTTP API's requests to this OTLP/HTTP collector `URL` (http://HOST:4318; default: no traces)")
	f.dips = addDipFlags(fs)
	f.redis = addRedisFlags(fs)
	f.jobs = addJobsFlags(fs)
	fs.StringVar(&f.pull.url, "db-url", "", "fetch the table from this `URL` (another server's /admin/v1/table, an object store, a CDN; .zst is decompressed) when it changes, and on start when --db is missing")
	fs.DurationVar(&f.pull.every, "db-url-every", time.Minute, "ask --db-url for a new table every `interval`")
	fs.StringVar(&f.pull.keyFile, "db-url-key-file", "", "`file` holding the key sent to --db-url as a bearer token (the origin's admin key)")
	fs.Int64Var(&f.pull.maxBytes, "db-url-max-bytes", 0, "refuse a table from --db-url larger than `n` bytes, received or decompressed, before writing it (0: the size its header declares)")
	fs.DurationVar(&f.pull.timeout, "db-url-timeout", distribute.DefaultTimeout, "give up a fetch from --db-url that takes longer than `duration` in all")
	config.Secret(fs, &f.updates.dsn, "updates-log", "", "share one ordered log of admin updates with other nodes in this PostgreSQL `DSN` (postgres://…; may be the --accounts database): an update posted to any node is logged once and applied by every node")
	fs.StringVar(&f.updates.schema, "updates-log-schema", "", "keep --updates-log's tables in this PostgreSQL `schema`, created when absent; nodes share a log only within one schema (default: the connection's search_path, normally public)")
	fs.StringVar(&f.updates.node, "node", "", "this node's `name` in --updates-log, unique among its nodes (default: host name and --addr's port)")
	return f
}

// check checks serve's command line once parsed and set from the
// environment, and notes the LNPDB_* variables no flag of fs reads.
func (f *serveFlags) check(fs *pflag.FlagSet, args []string) error {
	f.unknownEnv = config.Unknown(fs, os.Environ())
	switch {
	case len(args) != 0:
		return fmt.Errorf("%w: serve takes no arguments", cliutil.ErrUsage)
	case f.limit < 1:
		return fmt.Errorf("%w: --rate-limit must be at least 1", cliutil.ErrUsage)
	case f.accountsSchema != "" && !strings.HasPrefix(f.accountsDSN, "postgres://") && !strings.HasPrefix(f.accountsDSN, "postgresql://"):
		return fmt.Errorf("%w: --accounts-schema is for an --accounts postgres://… store", cliutil.ErrUsage)
	case f.accountsSchema != "" && pgschema.CheckSchema(f.accountsSchema) != nil:
		return fmt.Errorf("%w: --accounts-schema: %v", cliutil.ErrUsage, pgschema.CheckSchema(f.accountsSchema))
	case f.accountsDSN != "" && (f.keysPath != "" || f.devKey):
		return fmt.Errorf("%w: with --accounts the keys come from the accounts store: leave out --keys and --dev-key", cliutil.ErrUsage)
	case f.leaseTTL < time.Second:
		return fmt.Errorf("%w: --lease-ttl must be at least 1s", cliutil.ErrUsage)
	case f.accountsTimeout <= 0 || f.accountsTimeout > writeTimeout/2:
		return fmt.Errorf("%w: --accounts-timeout must be above 0 and at most %v, half the write timeout, so that an answer paid for is written", cliutil.ErrUsage, writeTimeout/2)
	case f.compactAt < 0 || f.watchEvery < 0 || f.httpMaxConns < 0 || f.httpPerAddr < 0:
		return fmt.Errorf("%w: --compact-at, --watch, --http-max-conns and --http-max-conns-per-addr must not be negative", cliutil.ErrUsage)
	case f.dbPath != "" && f.keysPath == "" && !f.devKey && f.accountsDSN == "":
		// An exposed server without keys is a mistake; the zero-setup
		// demo (no --db) gets a development key instead.
		return fmt.Errorf("%w: refusing to serve %s without --keys FILE (create one with: lnpdb key new --keys FILE); for a development key printed now, add --dev-key", cliutil.ErrUsage, f.dbPath)
	}
	if err := f.pull.check(f.dbPath); err != nil {
		return err
	}
	if err := f.redis.check(); err != nil {
		return err
	}
	if err := f.updates.check(); err != nil {
		return err
	}
	return nil
}

// checkFiles checks the files serve reads that the flags name and that are
// not read before the listeners are bound: the table (unless --db-url fetches
// a missing one) and --db-url-key-file. Opening and verifying the table is
// work done after binding; that the file is there is not.
func (f *serveFlags) checkFiles() error {
	if f.dbPath != "" && f.pull.url == "" {
		if _, err := os.Stat(f.dbPath); err != nil {
			return fmt.Errorf("--db: %w", err)
		}
	}
	if _, err := cliutil.ReadKeyFile(f.pull.keyFile); err != nil {
		return fmt.Errorf("--db-url-key-file: %w", err)
	}
	return nil
}

// bills reports whether lookups are billed: with --accounts, and in the
// zero-flag demo (a demo account in a throw-away store).
func (f *serveFlags) bills() bool {
	return f.accountsDSN != "" || (f.dbPath == "" && f.keysPath == "" && !f.devKey)
}

// serveRun is one run of serve: what it opened, in the order it opened it,
// so that closing takes it down in reverse.
type serveRun struct {
	f       *serveFlags
	log     *slog.Logger
	logOut  *httpapi.LogWriter
	closers []func()

	keys      *serveKeys
	dev       string // the development or demo key, printed once
	listeners []net.Listener
	acc       *billed
	path      string // the table's file
	db        *format.DB
	reg       *prometheus.Registry
	metrics   *httpapi.Metrics
	lv        *live.Runner
	tls       *serveTLS
	origins   []string // CORS
	proxies   []netip.Prefix
	dips      *dips
	history   *history.Sampler
	redis     func() redislimit.Status // nil without --redis
	accAdmin  *billing.Admin           // the accounts admin operations; nil without --accounts and --admin-keys
	servers   []*http.Server
	// connDropped counts the HTTP connections the gate closed at accept.
	connDropped *prometheus.CounterVec
}

func (s *serveRun) onClose(fn func()) { s.closers = append(s.closers, fn) }

func (s *serveRun) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func runServe(ctx context.Context, e *cliutil.Env, f *serveFlags) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
	s := &serveRun{f: f}
	defer s.close()
	if err := s.openStores(ctx, e); err != nil {
		return err
	}
	if err := s.startFrontEnds(ctx); err != nil {
		return err
	}
	return s.serve(ctx, e)
}

// openStores opens the log and the keys, checks the files the flags name,
// binds the listeners (before any work, so that a busy port fails early),
// opens the accounts store, the table and its live runner.
func (s *serveRun) openStores(ctx context.Context, e *cliutil.Env) error {
	f := s.f
	// Log lines are written in batches: a line per request written on its
	// own would cost a system call per request. A log output that stops
	// reading loses lines (counted) instead of stalling requests.
	s.logOut = httpapi.NewLogWriter(e.Stderr, logFlushEvery)
	s.onClose(func() { s.logOut.Close() })
	var err error
	if s.log, err = newServeLog(s.logOut, f.logFormat, f.logLevel); err != nil {
		return err
	}
	for _, name := range f.unknownEnv {
		s.log.Warn("no flag of serve reads this environment variable: is it misspelt?", "variable", name)
	}
	if s.tls, err = newServeTLS(f.tlsCert, f.tlsKey, s.log); err != nil {
		return err
	}
	if s.origins, err = corsOrigins(f.cors); err != nil {
		return err
	}
	if s.proxies, err = parsePrefixes("trusted-proxies", f.trustedProxies); err != nil {
		return err
	}
	var devHash *auth.Key
	if !f.bills() && (f.devKey || f.keysPath == "") {
		s.dev = auth.NewKey()
		h := auth.HashKey(s.dev)
		devHash = &h
	}
	if s.keys, err = loadServeKeys(f.keysPath, f.adminKeysPath, devHash); err != nil {
		return err
	}
	// Every input is checked before a port is bound: a mistake is
	// reported as itself, not as the busy port of a server left running.
	if err := f.checkFiles(); err != nil {
		return err
	}
	// A failed accept (descriptors run out) is retried, never fatal. One
	// remote address holds at most its share of the places, so that a
	// client holding idle connections leaves room for the others and for
	// the health checks.
	maxConns := orCap(f.httpMaxConns, httpMaxConns, sockets.ShareHTTP)
	perAddr := f.httpPerAddr
	if perAddr == 0 {
		perAddr = max(1, maxConns/2)
	}
	s.connDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lnpdb_http_connections_dropped_total",
		Help: "HTTP connections closed at accept, by reason (full: --http-max-conns reached; per_source: --http-max-conns-per-addr reached from the connection's address)."}, []string{"reason"})
	gate := sockets.NewGate(sockets.Limits{
		MaxConns: maxConns, PerSource: perAddr, Logger: s.log,
		Shared:  func(a netip.Addr) bool { return httpapi.IsTrusted(a, s.proxies) },
		Dropped: func(why string) { s.connDropped.WithLabelValues(why).Inc() },
	})
	for _, a := range []struct{ flag, addr string }{{"--addr", f.addr}, {"--metrics-addr", f.metricsAddr}} {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("%s: %w", a.flag, err)
		}
		ln = gate.Listener(ln)
		if s.tls == nil {
			// A request framed two ways is answered 400, its connection
			// closed; over TLS net/http must see its own *tls.Conn.
			ln = httpapi.FramingListener(ln)
		}
		s.onClose(func() { ln.Close() })
		s.listeners = append(s.listeners, ln)
	}
	if f.bills() {
		b, demoKey, cleanup, err := openBilling(ctx, f.accountsDSN, f.accountsSchema, f.leaseTTL, f.accountsTimeout, s.log)
		if err != nil {
			return err
		}
		s.onClose(cleanup)
		s.acc, s.dev = b, demoKey
		s.onClose(func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			if err := b.close(cctx); err != nil {
				s.log.Error("returning leases of credit", "error", err)
			}
		})
	}
	path, cleanup, err := cliutil.TablePath(ctx, f.dbPath)
	if err != nil {
		return err
	}
	s.onClose(cleanup)
	s.path = path
	if err := f.pull.fetchMissing(ctx, path, s.log); err != nil {
		return err
	}
	// Every byte is checked before the first lookup, and every
	// replacement before it is swapped in: a damaged file is refused,
	// never served.
	opened := time.Now()
	_ = sdnotify.Notify(sdnotify.Status("verifying and opening the table " + path))
	if s.db, err = format.OpenWriter(path, format.Verify()); err != nil {
		return cliutil.WriterAdvice(err, "each lnpdb serve needs its own copy of the table (see OPERATIONS, several nodes); stop the other, or let the apply finish")
	}
	s.onClose(func() { s.db.Close() })
	logRecovery(s.log, s.db, time.Since(opened))

	s.reg = httpapi.NewRegistry()
	if err := s.reg.Register(buildinfo.Read().Collector()); err != nil {
		return err
	}
	if s.metrics, err = httpapi.NewMetrics(s.reg); err != nil {
		return err
	}
	if err := s.metrics.RegisterLogWriter(s.logOut); err != nil {
		return err
	}
	if err := s.reg.Register(s.connDropped); err != nil {
		return err
	}
	if s.acc != nil {
		if err := s.acc.engine.RegisterMetrics(s.reg); err != nil {
			return err
		}
	}
	// Live data: reloads on file replacement and SIGHUP, updates through
	// the admin API, compaction in the background; stopped and awaited
	// before the table closes.
	if s.lv, err = live.Start(live.Config{DB: s.db, Logger: s.log, CompactAt: f.compactAt, Watch: f.watchEvery, Registerer: s.reg}); err != nil {
		return err
	}
	s.onClose(s.lv.Stop)
	if err := f.pull.start(s.lv, s.reg, s.log); err != nil {
		return err
	}
	s.onClose(f.pull.stop) // before lv.Stop
	return f.updates.start(s, s.listeners[0])
}

// startFrontEnds starts SIP, ENUM and pdb, builds the HTTP handlers and
// servers, and reloads table, keys and certificates on SIGHUP.
func (s *serveRun) startFrontEnds(ctx context.Context) error {
	f := s.f
	var err error
	if s.dips, err = startDips(f.dips, s.db, s.reg, s.log); err != nil {
		return err
	}
	s.startHistory()
	cfg := httpapi.Config{
		Tables:       httpapi.NewTable(s.db),
		DefaultLimit: f.limit,
		Logger:       s.log,
		AccessLog:    f.accessLog,
		Metrics:      s.metrics,
		ServeMetrics: f.metricsAddr == "",
		Live:         s.lv.Status,
		Pull:         f.pull.status(),
		Build:        buildinfo.Read(),
	}
	if f.logFormat == "json" && s.log.Enabled(context.Background(), slog.LevelInfo) {
		cfg.AccessLogTo = s.logOut // the same lines as through s.log, encoded faster
	}
	if f.otlpEndpoint != "" {
		tracer, shutdown, err := tracing.Start(context.Background(), f.otlpEndpoint, cfg.Build.Version)
		if err != nil {
			return fmt.Errorf("%w: %v", cliutil.ErrUsage, err)
		}
		cfg.Tracer = tracer
		s.onClose(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(ctx); err != nil {
				s.log.Error("flushing traces to --otlp-endpoint", "error", err)
			}
		})
	}
	rl, err := f.redis.open(s.log, s.reg)
	if err != nil {
		return err
	}
	if rl != nil {
		s.onClose(func() { rl.Close() })
		cfg.Limiter, cfg.Redis = rl, rl.Status
		s.redis = rl.Status
		cfg.Ready = append(cfg.Ready, httpapi.Check{Name: "redis", Check: func(context.Context) error {
			if st := rl.Status(); !st.OK {
				return fmt.Errorf("the Redis server %s does not answer: rate limits are taken in this process alone", st.Addr)
			}
			return nil
		}})
	}
	if fl := f.updates.follower; fl != nil {
		cfg.UpdateLog = fl.Status
		cfg.Ready = append(cfg.Ready, httpapi.Check{Name: "update_log", Check: func(context.Context) error {
			if st := fl.Status(); st.Postgres != "ok" {
				return fmt.Errorf("the shared update log is %s: updates are refused", st.Postgres)
			}
			return nil
		}})
	}
	if s.acc != nil {
		cfg.Ready = append(cfg.Ready, httpapi.Check{Name: "accounts", Check: s.acc.reachable})
		cfg.Keys, cfg.Accounts = s.acc, s.acc
	} else {
		cfg.Keys = s.keys.lookup
	}
	startJobs := func(*httpapi.Handler) {}
	if s.acc != nil {
		if startJobs, err = f.jobs.wire(&cfg, s.acc, f.leaseTTL, s.reg, s.log, s.onClose); err != nil {
			return err
		}
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		return err
	}
	startJobs(h)
	root, err := s.withAdmin(h)
	if err != nil {
		return err
	}
	if root, err = s.withWebUI(root); err != nil {
		return err
	}
	if root, err = httpapi.Conventions(root, httpapi.ConventionsConfig{CORSOrigins: s.origins, TrustedProxies: s.proxies}); err != nil {
		return err
	}
	s.servers = []*http.Server{newServer(root, s.log)}
	s.tls.configure(s.servers[0], f.h2c)
	if f.metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.metrics.Handler())
		s.servers = append(s.servers, newServer(mux, s.log))
	}

	hupCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.onClose(stop)
	hup := make(chan os.Signal, 1)
	notifyReload(hup, s.log)
	s.onClose(func() { signal.Stop(hup) })
	go func() {
		for {
			select {
			case <-hupCtx.Done():
				return
			case <-hup:
				_ = s.lv.Reload("SIGHUP") // logged
				s.keys.reload(s.log, "SIGHUP")
				s.tls.reload()
			}
		}
	}()
	return nil
}

// startHistory samples the front ends' answers and latency for the
// operator console, from the histograms they keep for /metrics.
func (s *serveRun) startHistory() {
	web, dip := s.metrics.Durations(), s.dips.vec.Durations()
	s.history = history.New(nil,
		history.Front{Name: "REST", Vec: web, Match: history.Label(0, httpapi.RESTLookupPaths()...)},
		history.Front{Name: "GraphQL", Vec: web, Match: history.Label(0, "/graphql")},
		history.Front{Name: "SIP", Vec: dip, Match: history.Label(0, "sip")},
		history.Front{Name: "ENUM", Vec: dip, Match: history.Label(0, "enum")},
		history.Front{Name: "pdb", Vec: dip, Match: history.Label(0, "pdb")},
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.history.Run(ctx); close(done) }()
	s.onClose(func() { cancel(); <-done })
}

// withAdmin puts the admin API (and, with accounts, the accounts admin
// API) in front of h when there are admin keys.
func (s *serveRun) withAdmin(h http.Handler) (http.Handler, error) {
	if s.keys.admin == nil {
		return h, nil
	}
	var lookupKeys auth.KeyStore // a lookup key sent to the admin API is told so
	switch {
	case s.acc != nil:
		lookupKeys = s.acc
	case s.keys.lookup != nil:
		lookupKeys = s.keys.lookup
	}
	admin, err := httpapi.NewAdmin(httpapi.AdminConfig{
		Tables:     httpapi.NewTable(s.db),
		Keys:       s.keys.admin,
		LookupKeys: lookupKeys,
		Live:       s.lv,
		Logger:     s.log,
		UpdateLog:  s.updateLog(),
		AccessLog:  s.f.accessLog,
	})
	if err != nil {
		return nil, err
	}
	var accountsAdmin http.Handler = admin
	if s.acc != nil {
		if s.accAdmin, err = s.acc.admin(s.keys.admin, s.log); err != nil {
			return nil, err
		}
		accountsAdmin = s.accAdmin
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAccountsAdmin(r.URL.Path) {
			accountsAdmin.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			admin.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// updateLog is the admin API's shared update log; nil without one.
func (s *serveRun) updateLog() httpapi.UpdateLog {
	if s.f.updates.follower == nil {
		return nil
	}
	return s.f.updates.follower
}

// serve says where it serves, serves until ctx ends or a listener fails,
// and shuts the servers down gracefully.
func (s *serveRun) serve(ctx context.Context, e *cliutil.Env) error {
	f, ln := s.f, s.listeners[0]
	base := "http://" + ln.Addr().String()
	if s.tls != nil {
		base = "https://" + ln.Addr().String()
	}
	info := s.db.Info()
	// keys: how many keys authenticate lookups, the development key among
	// them; with an accounts store (the sample's demo account too) its
	// keys do, which this process does not count.
	var keys any = s.keys.lookupCount()
	if s.acc != nil {
		keys = "accounts"
	}
	s.log.Info("serving", "addr", base, "table", s.path, "version", info.Version,
		"built_at", info.BuiltAt.Format(time.RFC3339), "ported", info.Counts.Ported, "pending", s.db.PendingUpdates(), "keys", keys, "accounts", s.acc != nil,
		"admin_api", s.keys.admin != nil, "compact_at", f.compactAt)
	if len(s.servers) > 1 {
		s.log.Info("serving metrics", "addr", "http://"+s.listeners[1].Addr().String()+"/metrics")
	}
	printBanner(e.Stdout, base, s.dev, f.dbPath == "")
	if s.acc != nil && f.accountsDSN == "" {
		printDemo(e.Stdout, base, s.dev)
	}

	errc := make(chan error, len(s.servers))
	for i, srv := range s.servers {
		go func() {
			if i == 0 && s.tls != nil {
				errc <- srv.ServeTLS(s.listeners[i], "", "")
				return
			}
			errc <- srv.Serve(s.listeners[i])
		}()
	}
	// The table is verified and open, the listeners serve: a Type=notify
	// unit's start returns now.
	if err := sdnotify.Notify(sdnotify.Ready); err != nil {
		s.log.Warn("telling the service manager that serve is ready", "error", err.Error())
	}
	wctx, stopWatchdog := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatchdog()
	go sdnotify.RunWatchdog(wctx, func() bool { return s.selfCheck(wctx) })
	var err error
	select {
	case <-ctx.Done():
		_ = sdnotify.Notify(sdnotify.Stopping)
		s.log.Info("shutting down")
	case err = <-errc: // a listener failed
	case err = <-s.dips.errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	for _, srv := range s.servers {
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
	}
	if derr := s.dips.stop(sctx); derr != nil && err == nil {
		err = derr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// selfCheck reports whether the server answers its own status with "ok",
// over cleartext (over TLS it reports true): what the watchdog's
// keep-alives vouch for.
func (s *serveRun) selfCheck(ctx context.Context) bool {
	if s.tls != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cliutil.CheckStatus(ctx, cliutil.HealthURL(s.listeners[0].Addr().String())) == nil
}

// logRecovery tells the operator what opening the table found and mended.
func logRecovery(log *slog.Logger, db *format.DB, took time.Duration) {
	info := db.Info()
	log.Info("table opened and verified", "table", info.Path, "size", info.Size,
		"duration", took.Round(time.Millisecond))
	r := db.Recovery()
	if r.TornBytes > 0 {
		log.Warn("journal: an incomplete last batch was dropped (it was never acknowledged)",
			"table", info.Path, "bytes", r.TornBytes, "updates", r.TornUpdates)
	}
	for _, f := range r.RemovedTemps {
		log.Info("removed a temporary file of an interrupted build, compaction or journal rewrite", "file", f)
	}
	if r.SetAside > 0 {
		log.Warn("pending updates set aside: their SPID is not in the table", "table", info.Path,
			"set_aside", r.SetAside, "file", format.SetAsidePath(info.Path))
	}
}

func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       httpapi.FramingContext,
	}
}

// printBanner tells the operator where the server is and, with a
// development key, how to call it.
func printBanner(w io.Writer, base, dev string, sample bool) {
	what := "the table"
	if sample {
		what = "the embedded sample table"
	}
	fmt.Fprintf(w, "lnpdb serving %s on %s\n", what, base)
	if dev == "" {
		return
	}
	fmt.Fprintf(w, "\ndevelopment API key (valid until this server stops): %s\n\n", dev)
	fmt.Fprintf(w, "  curl -s %s/api/v1/lrn \\\n    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n    -d '{\"phone_number\":\"12025550123\",\"include_enhanced_lrn\":true,\"messaging_lookup\":true}'\n\n", base, dev)
	fmt.Fprintf(w, "  curl -s %s/graphql \\\n    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n    -d '{\"query\":\"{ lookupLrn(phoneNumber: \\\"12025550123\\\") { phoneNumber lrn carrier success error } }\"}'\n\n", base, dev)
}
