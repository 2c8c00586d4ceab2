package serve

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// redisFlags are serve's flags for a rate limit shared in Redis.
type redisFlags struct {
	url, prefix string
	password    string
	timeout     time.Duration
	pipeline    bool
}

func addRedisFlags(fs *pflag.FlagSet) *redisFlags {
	f := new(redisFlags)
	config.Secret(fs, &f.url, "redis", "", "share the rate limits with the other nodes in this Redis `URL`: redis://host:port/db or rediss://… (TLS); while Redis is unreachable each node enforces every key's limit on its own (default: limits in this process only)")
	config.Secret(fs, &f.password, "redis-password", "", "the `password` of --redis, in place of one in its URL (give it as LNPDB_REDIS_PASSWORD or in a file, not on the command line)")
	fs.StringVar(&f.prefix, "redis-prefix", redislimit.DefaultPrefix, "start the name of every rate-limit counter in Redis with this `prefix` (the same on every node that shares the limits)")
	fs.DurationVar(&f.timeout, "redis-timeout", redislimit.DefaultTimeout, "take a rate-limit decision locally, and probe Redis every second, when Redis does not answer within this `duration`")
	fs.BoolVar(&f.pipeline, "redis-pipeline", true, "send the rate-limit decisions in flight to Redis together, one pipeline per round trip (false: one connection per decision: less waiting when idle, half the decisions per second when busy)")
	return f
}

func (f *redisFlags) check() error {
	if f.url == "" {
		if f.password != "" {
			return fmt.Errorf("%w: --redis-password is the password of --redis, which is missing", cliutil.ErrUsage)
		}
		return nil
	}
	if f.timeout <= 0 || f.timeout > 10*time.Second {
		return fmt.Errorf("%w: --redis-timeout must be above 0 and at most 10s", cliutil.ErrUsage)
	}
	if f.prefix == "" {
		return fmt.Errorf("%w: --redis-prefix must not be empty", cliutil.ErrUsage)
	}
	if err := redislimit.CheckURL(f.url); err != nil {
		return fmt.Errorf("%w: --redis: %w", cliutil.ErrUsage, err)
	}
	return nil
}

// open returns the shared limiter, or nil without --redis. A Redis that does
// not answer does not stop the server: it starts with local limits.
func (f *redisFlags) open(log *slog.Logger, reg prometheus.Registerer) (*redislimit.Limiter, error) {
	if f.url == "" {
		return nil, nil
	}
	l, err := redislimit.New(redislimit.Config{URL: f.url, Password: f.password, Prefix: f.prefix, Timeout: f.timeout, NoPipeline: !f.pipeline, Logger: log, Registerer: reg})
	if err != nil {
		return nil, fmt.Errorf("--redis: %w", err)
	}
	st := l.Status()
	log.Info("rate limits shared in Redis", "redis", st.Addr, "prefix", f.prefix, "pipeline", f.pipeline, "ok", st.OK)
	return l, nil
}
