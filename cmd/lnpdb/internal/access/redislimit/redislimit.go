// Package redislimit owns the rate limit that several lnpdb nodes share: a
// [ratelimit.Limiter] whose counters live in Redis, so that a key gets its
// budget once across all nodes, not once per node.
//
// Every decision is one Lua script, run in one round trip (EVALSHA, with
// EVAL when Redis does not have the script cached). The decisions in flight
// at one time travel together, one pipeline of scripts per write and read
// (go-redis's autopipelining), which about doubles the decisions a busy
// node takes per second; Config.NoPipeline turns that off. The script keeps one
// Redis string per key, named Prefix + the key's id (the hex SHA-256 of
// the API key, never the key itself): the number of lookups counted in the
// key's current window, expiring when the window ends. The semantics are
// those of [ratelimit.MemoryLimiter], so a front end's headers do not tell
// the two apart: the window starts with the key's first request (allowed
// or not) and lasts the configured length; a request of n lookups is
// allowed whole or refused whole; Remaining and Reset are the counter's
// and its expiry's. The clock is Redis's, one for all nodes.
//
// When Redis cannot be reached, or answers an error, or does not answer
// within the timeout, the Limiter fails open to a local
// [ratelimit.MemoryLimiter]: each node then enforces every key's limit on
// its own, so N nodes let a key make up to N × its limit per window for as
// long as Redis is away (and a key's count starts over on each side of the
// outage). Lookups keep being answered. The first failure logs one line,
// sets lnpdb_ratelimit_redis_up to 0 and takes Redis off the request path;
// a background probe runs the script every ProbeEvery and, once it
// succeeds, logs one line and puts Redis back. Every decision taken
// locally counts in lnpdb_ratelimit_redis_fallback_total. A decision that
// timed out was sent, and Redis may still run it: it then counts lookups
// the node decided locally, an over-count, never an under-count.
//
// One Redis server (or one managed endpoint) holds the counters; Redis
// Cluster and Sentinel URLs are not supported.
package redislimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/redact"
)

// Defaults of [Config].
const (
	DefaultPrefix     = "lnpdb:ratelimit:"
	DefaultTimeout    = 100 * time.Millisecond
	DefaultProbeEvery = time.Second
)

// Config configures a Limiter. URL is required.
type Config struct {
	// URL is the Redis server: redis://[[user]:password@]host[:port][/db]
	// or rediss://… for TLS, with go-redis's query options.
	URL string
	// Password, when set, is sent in place of the URL's password, so that
	// the URL need not hold it.
	Password string
	// Prefix starts the name of every counter; DefaultPrefix when empty.
	// Nodes that share a limit use the same prefix.
	Prefix string
	// Window is the length of a window; ratelimit.DefaultWindow when 0.
	Window time.Duration
	// Timeout bounds one decision's dial, write and read, and the wait for
	// a pooled connection; DefaultTimeout when 0. A decision that takes
	// longer is taken locally and Redis is marked down.
	Timeout time.Duration
	// PoolSize is the number of connections to Redis; 10 per CPU when 0.
	PoolSize int
	// ProbeEvery is how often a Redis marked down is tried again;
	// DefaultProbeEvery when 0.
	ProbeEvery time.Duration
	// Logger receives one line when Redis goes down and one when it comes
	// back; nil discards them.
	Logger *slog.Logger
	// Registerer, when set, gets the Limiter's metrics.
	Registerer prometheus.Registerer
	// NoPipeline sends each decision on a connection of its own instead of
	// batching the decisions in flight into pipelines (go-redis's
	// autopipelining): a decision alone then waits less, but a node under
	// load takes about half as many decisions per second.
	NoPipeline bool
}

// Status is what GET /api/v1/status shows of the Limiter.
type Status struct {
	// Addr is the server's host:port and database, without credentials.
	Addr string `json:"addr"`
	// OK reports whether decisions are taken in Redis (false: locally).
	OK bool `json:"ok"`
	// LastError is the last failure of Redis, kept after it recovered.
	LastError string `json:"last_error,omitempty"`
	// LastChange is when OK last changed (or the Limiter started).
	LastChange lnpdb.Time `json:"last_change,omitzero"`
	// Fallbacks counts the decisions taken locally since start.
	Fallbacks uint64 `json:"fallbacks"`
}

// Limiter is a [ratelimit.Limiter] over Redis that fails open to a local
// one. It is safe for concurrent use; Close releases it.
type Limiter struct {
	client     *redis.Client
	scripter   redis.Scripter
	prefix     string
	window     time.Duration
	windowMS   int64
	timeout    time.Duration
	probeEvery time.Duration
	addr       string
	log        *slog.Logger
	local      *ratelimit.MemoryLimiter

	up        atomic.Bool
	fallbacks atomic.Uint64
	mu        sync.Mutex // guards lastErr, lastChg
	lastErr   string
	lastChg   time.Time

	upGauge       prometheus.Gauge
	fallbackCount prometheus.Counter
	errorCount    prometheus.Counter

	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// script decides one request. KEYS[1] is the key's counter; ARGV is the
// limit, n and the window in milliseconds. It answers {allowed (0 or 1),
// count after the request, milliseconds until the window ends}. A counter
// without an expiry was not written here and starts a new window.
var script = redis.NewScript(`
local limit = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local win = tonumber(ARGV[3])
local v = redis.call('GET', KEYS[1])
local c, ttl = 0, -1
if v then
  c = tonumber(v) or 0
  ttl = redis.call('PTTL', KEYS[1])
end
if ttl < 0 then
  c, ttl = 0, win
  redis.call('SET', KEYS[1], 0, 'PX', win)
end
if c + n > limit then
  return {0, c, ttl}
end
redis.call('INCRBY', KEYS[1], n)
return {1, c + n, ttl}
`)

var quietRedis sync.Once

// CheckURL reports whether rawURL is a Redis URL that New accepts; the
// error does not carry the password.
func CheckURL(rawURL string) error {
	_, err := parseURL(rawURL)
	return err
}

func parseURL(rawURL string) (*redis.Options, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, redact.Err(fmt.Errorf("redislimit: %s: %w", redact.DSN(rawURL), err), rawURL)
	}
	return opts, nil
}

// New connects to cfg.URL and returns its Limiter. A URL that does not
// parse is an error; a Redis that does not answer is not: the Limiter
// starts down, deciding locally, and probes until Redis answers.
func New(cfg Config) (*Limiter, error) {
	opts, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Password != "" {
		opts.Password = cfg.Password
	}
	l := &Limiter{
		prefix:     cfg.Prefix,
		window:     cfg.Window,
		timeout:    cfg.Timeout,
		probeEvery: cfg.ProbeEvery,
		addr:       opts.Addr + "/" + fmt.Sprint(opts.DB),
		log:        cfg.Logger,
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	if l.window <= 0 {
		l.window = ratelimit.DefaultWindow
	}
	if l.window < time.Millisecond {
		return nil, errors.New("redislimit: a window must be at least 1ms")
	}
	l.windowMS = l.window.Milliseconds()
	if l.timeout <= 0 {
		l.timeout = DefaultTimeout
	}
	if l.probeEvery <= 0 {
		l.probeEvery = DefaultProbeEvery
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.local = ratelimit.NewMemoryLimiter(l.window, nil)

	// A decision is on a request's path: it waits at most the timeout,
	// is never retried (the local limiter answers instead), and finds an
	// idle connection ready.
	opts.DialTimeout = l.timeout
	opts.ReadTimeout = l.timeout
	opts.WriteTimeout = l.timeout
	opts.PoolTimeout = l.timeout
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	opts.PoolSize = cfg.PoolSize
	if opts.PoolSize <= 0 {
		opts.PoolSize = 10 * runtime.GOMAXPROCS(0)
	}
	opts.MinIdleConns = min(runtime.GOMAXPROCS(0), opts.PoolSize)
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	// go-redis logs each failed dial and pool event on its own; the
	// Limiter logs the transitions instead.
	quietRedis.Do(func() { redis.SetLogger(discard{}) })
	l.client = redis.NewClient(opts)
	l.scripter = l.client
	if !cfg.NoPipeline {
		ap, err := l.client.AutoPipeline()
		if err != nil {
			l.client.Close()
			return nil, fmt.Errorf("redislimit: %w", err)
		}
		l.scripter = ap
	}

	l.upGauge = metric.Gauge("lnpdb_ratelimit_redis_up",
		"1 while rate-limit decisions are taken in Redis, 0 while they are taken locally.")
	l.fallbackCount = metric.Counter("lnpdb_ratelimit_redis_fallback_total",
		"Rate-limit decisions taken by the local limiter because Redis was down.")
	l.errorCount = metric.Counter("lnpdb_ratelimit_redis_errors_total",
		"Failed calls to Redis (decisions and probes).")
	if err := metric.Register(cfg.Registerer, l.upGauge, l.fallbackCount, l.errorCount); err != nil {
		l.client.Close()
		return nil, fmt.Errorf("redislimit: %w", err)
	}

	l.up.Store(true)
	l.upGauge.Set(1)
	l.lastChg = time.Now()
	go l.probeLoop()
	if err := l.probe(); err != nil {
		l.markDown(err)
	}
	return l, nil
}

// Window returns the length of a window, which the RateLimit-Policy header
// states.
func (l *Limiter) Window() time.Duration { return l.window }

// AllowN implements [ratelimit.Limiter]. It never fails: when Redis does
// not decide, the local limiter does.
func (l *Limiter) AllowN(ctx context.Context, keyID string, limit, n int) (ratelimit.Decision, error) {
	n = max(n, 1)
	if l.up.Load() {
		d, err := l.decide(ctx, l.prefix+keyID, limit, n)
		if err == nil {
			return d, nil
		}
		l.errorCount.Inc()
		if ctx.Err() == nil { // not the caller giving up
			l.markDown(err)
		}
	}
	l.fallbacks.Add(1)
	l.fallbackCount.Inc()
	return l.local.AllowN(ctx, keyID, limit, n)
}

func (l *Limiter) decide(ctx context.Context, key string, limit, n int) (ratelimit.Decision, error) {
	r, err := script.Run(ctx, l.scripter, []string{key}, limit, n, l.windowMS).Int64Slice()
	if err != nil {
		return ratelimit.Decision{}, err
	}
	if len(r) != 3 {
		return ratelimit.Decision{}, fmt.Errorf("redislimit: the script answered %d values, not 3", len(r))
	}
	return ratelimit.Decision{
		Allowed:   r[0] == 1,
		Limit:     limit,
		Remaining: max(limit-int(r[1]), 0),
		Reset:     time.Duration(r[2]) * time.Millisecond,
	}, nil
}

// probe runs the script once, on a counter of its own, with a limit of 0:
// it tells whether Redis decides, counting nothing.
func (l *Limiter) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	_, err := l.decide(ctx, l.prefix+"probe", 0, 1)
	if err != nil {
		l.errorCount.Inc()
	}
	return err
}

func (l *Limiter) markDown(err error) {
	l.mu.Lock()
	l.lastErr = err.Error()
	changed := l.up.CompareAndSwap(true, false)
	if changed {
		l.lastChg = time.Now()
	}
	l.mu.Unlock()
	if !changed {
		return
	}
	l.upGauge.Set(0)
	l.log.Warn("Redis rate limiter unreachable: each node now enforces every key's limit on its own", "redis", l.addr, "error", err.Error())
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *Limiter) markUp(down time.Duration) {
	l.mu.Lock()
	l.lastChg = time.Now()
	l.up.Store(true)
	l.mu.Unlock()
	l.upGauge.Set(1)
	l.log.Info("Redis rate limiter back: limits are shared again", "redis", l.addr, "down_for", down.Round(time.Millisecond))
}

// probeLoop waits for Redis to go down, then probes it until it answers.
func (l *Limiter) probeLoop() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.wake:
		}
		t := time.NewTicker(l.probeEvery)
		for !l.up.Load() {
			select {
			case <-l.stop:
				t.Stop()
				return
			case <-t.C:
			}
			if err := l.probe(); err != nil {
				l.mu.Lock()
				l.lastErr = err.Error()
				l.mu.Unlock()
				continue
			}
			l.mu.Lock()
			since := l.lastChg
			l.mu.Unlock()
			l.markUp(time.Since(since))
		}
		t.Stop()
	}
}

// Status reports whether Redis decides, its last error and how many
// decisions were taken locally.
func (l *Limiter) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Status{
		Addr:       l.addr,
		OK:         l.up.Load(),
		LastError:  l.lastErr,
		LastChange: lnpdb.Unix(l.lastChg.Unix()),
		Fallbacks:  l.fallbacks.Load(),
	}
}

// Close stops the probe and closes the connections. It is idempotent.
func (l *Limiter) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.stop)
		<-l.done
		err = l.client.Close()
	})
	return err
}

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
