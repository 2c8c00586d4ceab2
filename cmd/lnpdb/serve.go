package main

import (
	"context"
	"errors"
	"fmt"
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
	keysPath := fs.String("keys", "", "API keys `file`: sha256:<64 hex>[,<requests per minute>] per line (see lnpdb key new)")
	accountsDSN := fs.String("accounts", "", "bill lookups to the accounts of this store `DSN`, whose keys then authenticate: bolt:///path/accounts.db or postgres://… (see lnpdb account)")
	devKey := fs.Bool("dev-key", false, "also accept a development API key generated now and printed once")
	metricsAddr := fs.String("metrics-addr", "", "serve /metrics on this separate `host:port` (default: /metrics on --addr)")
	limit := fs.Int("rate-limit", httpapi.DefaultLimit, "requests per minute for a key without a limit of its own")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	accessLog := fs.Bool("access-log", true, "log every request (method, path, status, duration, key id)")
	adminKeysPath := fs.String("admin-keys", "", "admin keys `file` (same format as --keys): enables POST /admin/v1/updates and /admin/v1/compact, and with --accounts the accounts admin API (/admin/v1/accounts…), for these keys only")
	compactAt := fs.Int("compact-at", 100000, "compact in the background once this many numbers have pending updates (0: never)")
	leaseTTL := fs.Duration("lease-ttl", 30*time.Second, "with --accounts: how long credit leased by this process outlives its last sync (what a killed process's leases hold stays out this long)")
	watchEvery := fs.Duration("watch", time.Second, "check the table file for a replacement every `interval` and reload it (0: only on SIGHUP)")
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
	// Log lines are written in batches: a line per request written on its
	// own would cost a system call per request.
	logOut := httpapi.NewLogWriter(e.stderr, logFlushEvery)
	defer logOut.Close()
	var logHandler slog.Handler
	switch *logFormat {
	case "text":
		logHandler = slog.NewTextHandler(logOut, nil)
	case "json":
		logHandler = slog.NewJSONHandler(logOut, nil)
	default:
		return fmt.Errorf("%w: --log-format must be text or json", errUsage)
	}
	log := slog.New(logHandler)

	// An exposed server without keys is a mistake; the zero-setup demo
	// (no --db) gets a development key instead.
	if *dbPath != "" && *keysPath == "" && !*devKey && *accountsDSN == "" {
		return fmt.Errorf("%w: refusing to serve %s without --keys FILE (create one with: lnpdb key new --keys FILE); for a development key printed now, add --dev-key", errUsage, *dbPath)
	}
	var keys []httpapi.Key
	if *keysPath != "" {
		ks, err := httpapi.LoadKeys(*keysPath)
		if err != nil {
			return err
		}
		if ks.Len() == 0 && !*devKey {
			return fmt.Errorf("%s holds no keys: no request could be served (add one with lnpdb key new --keys %s)", *keysPath, *keysPath)
		}
		keys = ks.Keys()
	}
	var (
		dev string
		err error
	)
	// No flags at all: a demo account that bills, in a throw-away store.
	bill := *accountsDSN != "" || (*dbPath == "" && *keysPath == "" && !*devKey)
	if !bill && (*devKey || *keysPath == "") {
		dev = httpapi.NewKey()
		keys = append(keys, httpapi.HashKey(dev))
	}

	var adminKeys *httpapi.KeySet
	if *adminKeysPath != "" {
		if adminKeys, err = httpapi.LoadKeys(*adminKeysPath); err != nil {
			return err
		}
		if adminKeys.Len() == 0 {
			return fmt.Errorf("%s holds no keys: leave out --admin-keys to serve without the admin API", *adminKeysPath)
		}
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
	db, err := format.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()

	metrics, err := httpapi.NewMetrics(nil)
	if err != nil {
		return err
	}
	cfg := httpapi.Config{
		Tables:       httpapi.NewTable(db),
		Keys:         httpapi.NewKeySet(keys...),
		DefaultLimit: *limit,
		Logger:       log,
		AccessLog:    *accessLog,
		Metrics:      metrics,
		ServeMetrics: *metricsAddr == "",
	}
	if acc != nil {
		cfg.Keys, cfg.Accounts = acc, acc
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		return err
	}

	// Live data: reloads on file replacement and SIGHUP, updates through
	// the admin API, compaction in the background.
	lv := newLive(db, log, *compactAt)
	liveCtx, stopLive := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopLive()
		lv.wait() // before db.Close
	}()
	if *watchEvery > 0 {
		go lv.watch(liveCtx, *watchEvery)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-liveCtx.Done():
				return
			case <-hup:
				_ = lv.reload("SIGHUP") // logged
			}
		}
	}()
	var root http.Handler = h
	if adminKeys != nil {
		admin, err := httpapi.NewAdmin(httpapi.AdminConfig{
			Tables:    httpapi.NewTable(db),
			Keys:      adminKeys,
			Compact:   func() bool { return lv.startCompaction(liveCtx, "admin") },
			Applied:   func(*format.DB) { lv.applied(liveCtx) },
			Logger:    log,
			AccessLog: *accessLog,
		})
		if err != nil {
			return err
		}
		var accountsAdmin http.Handler = admin
		if acc != nil {
			if accountsAdmin, err = acc.admin(adminKeys, log); err != nil {
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

	servers := []*http.Server{newServer(root, log)}
	if *metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		servers = append(servers, newServer(mux, log))
	}

	base := "http://" + ln.Addr().String()
	info := db.Info()
	log.Info("serving", "addr", base, "table", path, "version", info.Version,
		"built_at", info.BuiltAt.Format(time.RFC3339), "ported", info.Counts.Ported, "pending", db.PendingUpdates(), "keys", len(keys), "accounts", acc != nil,
		"admin_api", adminKeys != nil, "compact_at", *compactAt)
	if len(servers) > 1 {
		log.Info("serving metrics", "addr", "http://"+listeners[1].Addr().String()+"/metrics")
	}
	printBanner(e.stdout, base, dev, *dbPath == "")
	if acc != nil && *accountsDSN == "" {
		printDemo(e.stdout, base, dev)
	}

	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc: // a listener failed
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
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
