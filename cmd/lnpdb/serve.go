package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/lnpdb/lnpdb/internal/auth"
	"github.com/lnpdb/lnpdb/internal/ratelimit"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/httpapi"
	"github.com/lnpdb/lnpdb/internal/live"
)

func init() {
	register(command{name: "serve", summary: "serve lookups over REST and GraphQL (no flags: the sample, with a dev key)", run: runServe})
}

// Server limits. Lookups answer in microseconds; the timeouts only bound
// slow or stalled clients.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 16 << 10
	shutdownTimeout   = 10 * time.Second
	logFlushEvery     = 100 * time.Millisecond
)

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "")
	dbPath := fs.String("db", "", "table `file` to serve (default: build the embedded sample into a temporary directory and serve it)")
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on")
	keysPath := fs.String("keys", "", "API keys `file`: sha256:<64 hex>[,<requests per minute>] per line (see lnpdb key new); re-read on SIGHUP")
	accountsDSN := fs.String("accounts", "", "bill lookups to the accounts of this store `DSN`, whose keys then authenticate: bolt:///path/accounts.db or postgres://… (see lnpdb account)")
	devKey := fs.Bool("dev-key", false, "also accept a development API key generated now and printed once")
	metricsAddr := fs.String("metrics-addr", "", "serve /metrics on this separate `host:port` (default: /metrics on --addr)")
	limit := fs.Int("rate-limit", ratelimit.DefaultLimit, "requests per minute for a key without a limit of its own")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	accessLog := fs.Bool("access-log", true, "log every request (method, path, status, duration, key id)")
	adminKeysPath := fs.String("admin-keys", "", "admin keys `file` (same format as --keys, not the same file; re-read on SIGHUP): enables POST /admin/v1/updates and /admin/v1/compact, and with --accounts the accounts admin API (/admin/v1/accounts…), for these keys only")
	compactAt := fs.Int("compact-at", 100000, "compact in the background once this many numbers have pending updates (0: never)")
	leaseTTL := fs.Duration("lease-ttl", 30*time.Second, "with --accounts: how long credit leased by this process outlives its last sync (what a killed process's leases hold stays out this long)")
	watchEvery := fs.Duration("watch", time.Second, "check the table file for a replacement every `interval` and reload it (0: only on SIGHUP)")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate `file` (PEM, chain first); SIGHUP reloads it")
	tlsKey := fs.String("tls-key", "", "the private key `file` (PEM) of --tls-cert")
	h2c := fs.Bool("h2c", false, "also accept HTTP/2 without TLS (prior knowledge), e.g. behind a proxy")
	cors := fs.String("cors-origin", "", "let browsers of these comma-separated `origins` (or *) call the API (default: no CORS)")
	dipOpts := addDipFlags(fs)
	var pull pullFlags
	fs.StringVar(&pull.url, "db-url", "", "fetch the table from this `URL` (another server's /admin/v1/table, an object store, a CDN; .zst is decompressed) when it changes, and on start when --db is missing")
	fs.DurationVar(&pull.every, "db-url-every", time.Minute, "ask --db-url for a new table every `interval`")
	fs.StringVar(&pull.keyFile, "db-url-key-file", "", "`file` holding the key sent to --db-url as a bearer token (the origin's admin key)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("%w: serve takes no arguments", errUsage)
	}
	if *limit < 1 {
		return fmt.Errorf("%w: --rate-limit must be at least 1", errUsage)
	}
	if *accountsDSN != "" && (*keysPath != "" || *devKey) {
		return fmt.Errorf("%w: with --accounts the keys come from the accounts store: leave out --keys and --dev-key", errUsage)
	}
	if *leaseTTL < time.Second {
		return fmt.Errorf("%w: --lease-ttl must be at least 1s", errUsage)
	}
	if *compactAt < 0 || *watchEvery < 0 {
		return fmt.Errorf("%w: --compact-at and --watch must not be negative", errUsage)
	}
	if err := pull.check(*dbPath); err != nil {
		return err
	}
	// Log lines are written in batches: a line per request written on its
	// own would cost a system call per request. A log output that stops
	// reading loses lines (counted) instead of stalling requests.
	logOut := httpapi.NewLogWriter(e.stderr, logFlushEvery)
	defer logOut.Close()
	log, err := newServeLog(logOut, *logFormat)
	if err != nil {
		return err
	}
	origins, err := corsOrigins(*cors)
	if err != nil {
		return err
	}
	tlsCerts, err := newServeTLS(*tlsCert, *tlsKey, log)
	if err != nil {
		return err
	}

	// An exposed server without keys is a mistake; the zero-setup demo
	// (no --db) gets a development key instead.
	if *dbPath != "" && *keysPath == "" && !*devKey && *accountsDSN == "" {
		return fmt.Errorf("%w: refusing to serve %s without --keys FILE (create one with: lnpdb key new --keys FILE); for a development key printed now, add --dev-key", errUsage, *dbPath)
	}
	var (
		dev     string
		devHash *auth.Key
	)
	// No flags at all: a demo account that bills, in a throw-away store.
	bill := *accountsDSN != "" || (*dbPath == "" && *keysPath == "" && !*devKey)
	if !bill && (*devKey || *keysPath == "") {
		dev = auth.NewKey()
		h := auth.HashKey(dev)
		devHash = &h
	}
	keys, err := loadServeKeys(*keysPath, *adminKeysPath, devHash)
	if err != nil {
		return err
	}

	// Listen first: a busy port fails before any work is done.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	listeners := []net.Listener{ln}
	defer ln.Close()
	if *metricsAddr != "" {
		mln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer mln.Close()
		listeners = append(listeners, mln)
	}

	var acc *billed
	if bill {
		b, demoKey, cleanup, err := openBilling(ctx, *accountsDSN, *leaseTTL, log)
		if err != nil {
			return err
		}
		defer cleanup()
		acc, dev = b, demoKey
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			if err := b.close(cctx); err != nil {
				log.Error("returning leases of credit", "error", err)
			}
		}()
	}

	path, cleanup, err := tablePath(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer cleanup()
	// Every byte is checked before the first lookup, and every
	// replacement before it is swapped in: a damaged file is refused,
	// never served.
	if err := pull.fetchMissing(ctx, path, log); err != nil {
		return err
	}
	opened := time.Now()
	db, err := format.Open(path, format.WithVerify())
	if err != nil {
		return err
	}
	defer db.Close()
	logRecovery(log, db, time.Since(opened))

	reg := httpapi.NewRegistry()
	metrics, err := httpapi.NewMetrics(reg)
	if err != nil {
		return err
	}
	// SIP, ENUM and pdb front ends (flags --sip, --dns, --pdb).
	dipSrv, err := startDips(dipOpts, db, reg, log)
	if err != nil {
		return err
	}
	if err := metrics.RegisterLogWriter(logOut); err != nil {
		return err
	}
	// Live data: reloads on file replacement and SIGHUP, updates through
	// the admin API, compaction in the background; stopped and awaited
	// before the table closes.
	lv, err := live.Start(live.Config{DB: db, Logger: log, CompactAt: *compactAt, Watch: *watchEvery, Registerer: reg})
	if err != nil {
		return err
	}
	defer lv.Stop()
	if err := pull.start(lv, reg, log); err != nil {
		return err
	}
	defer pull.stop() // before lv.Stop
	cfg := httpapi.Config{
		Tables:       httpapi.NewTable(db),
		DefaultLimit: *limit,
		Logger:       log,
		AccessLog:    *accessLog,
		Metrics:      metrics,
		ServeMetrics: *metricsAddr == "",
		Live:         lv.Status,
		Pull:         pull.status(),
	}
	if acc != nil {
		cfg.Keys, cfg.Accounts = acc, acc
	} else {
		cfg.Keys = keys.lookup
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		return err
	}

	liveCtx, stopLive := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLive()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-liveCtx.Done():
				return
			case <-hup:
				_ = lv.Reload("SIGHUP") // logged
				keys.reload(log, "SIGHUP")
				tlsCerts.reload()
			}
		}
	}()
	var root http.Handler = h
	if keys.admin != nil {
		admin, err := httpapi.NewAdmin(httpapi.AdminConfig{
			Tables:    httpapi.NewTable(db),
			Keys:      keys.admin,
			Live:      lv,
			Logger:    log,
			AccessLog: *accessLog,
		})
		if err != nil {
			return err
		}
		var accountsAdmin http.Handler = admin
		if acc != nil {
			if accountsAdmin, err = acc.admin(keys.admin, log); err != nil {
				return err
			}
		}
		root = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isAccountsAdmin(r.URL.Path) {
				accountsAdmin.ServeHTTP(w, r)
				return
			}
			if strings.HasPrefix(r.URL.Path, "/admin/") {
				admin.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}

	if root, err = httpapi.Conventions(root, httpapi.ConventionsConfig{CORSOrigins: origins}); err != nil {
		return err
	}
	servers := []*http.Server{newServer(root, log)}
	tlsCerts.configure(servers[0], *h2c)
	if *metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		servers = append(servers, newServer(mux, log))
	}

	base := "http://" + ln.Addr().String()
	if tlsCerts != nil {
		base = "https://" + ln.Addr().String()
	}
	info := db.Info()
	log.Info("serving", "addr", base, "table", path, "version", info.Version,
		"built_at", info.BuiltAt.Format(time.RFC3339), "ported", info.Counts.Ported, "pending", db.PendingUpdates(), "keys", keys.lookupCount(), "accounts", acc != nil,
		"admin_api", keys.admin != nil, "compact_at", *compactAt)
	if len(servers) > 1 {
		log.Info("serving metrics", "addr", "http://"+listeners[1].Addr().String()+"/metrics")
	}
	printBanner(e.stdout, base, dev, *dbPath == "")
	if acc != nil && *accountsDSN == "" {
		printDemo(e.stdout, base, dev)
	}

	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if i == 0 && tlsCerts != nil {
				errc <- srv.ServeTLS(listeners[i], "", "")
				return
			}
			errc <- srv.Serve(listeners[i])
		}()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc: // a listener failed
	case err = <-dipSrv.errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
	}
	if derr := dipSrv.stop(sctx); derr != nil && err == nil {
		err = derr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
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
