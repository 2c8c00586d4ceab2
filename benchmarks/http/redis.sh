#!/usr/bin/env bash
# redis.sh — lnpdb serve with its rate limit in memory and in Redis, in one
# run.
#
#   benchmarks/http/redis.sh          # → benchmarks/results/redis.md
#
# It builds lnpdb, generates a table, starts redis-server (Debian's package
# redis-server) on a loopback port and a temporary directory without
# persistence, and three lnpdb serve processes on the table with one keys
# file: "memory" (the default in-process limiter), "redis" (--redis: one
# Lua script in Redis per request, the requests in flight pipelined) and
# "redis-unpipelined" (--redis-pipeline=false: a connection per decision).
# The key's rate limit cannot be reached, so every request is counted and
# allowed. wrk loads each with the same settings, in turns, with post.lua's
# REST enhanced LRN lookups; every figure is the median of ROUNDS rounds,
# each round running the targets back to back.
#
# Settings, from the environment:
#   PORTED=100000      ported numbers in the generated table
#   THREADS=1 CONNS=32 DURATION=10s ROUNDS=3 WARMUP=2s
#   PORT=18280 (memory), +1 (redis), +2 (Redis itself), +3 (redis-unpipelined)
#   REDIS_TIMEOUT=100ms  --redis-timeout (on a busy machine, decisions slower
#                        than that are taken locally and flatter the figure)
#   TMPBASE=/tmp KEEP=1 RESULTS=FILE COMMIT=…
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=100000 THREADS=1 CONNS=32 DURATION=10s ROUNDS=3 WARMUP=2s \
	PORT=18280 REDIS_TIMEOUT=100ms
results=${RESULTS:-$bench/results/redis.md}

need go
need curl
need wrk "Debian: apt-get install -y wrk"
need redis-server "Debian: apt-get install -y redis-server"

bench_tmp redis
build_lnpdb
gen_table "$tmp/us.lnpdb"
walk_numbers

log "starting redis-server on 127.0.0.1:$((PORT + 2))"
redis-server --port $((PORT + 2)) --bind 127.0.0.1 --dir "$tmp" --save '' --appendonly no \
	--loglevel warning >"$tmp/redis.log" 2>&1 &
pids+=($!)
redis_url="redis://127.0.0.1:$((PORT + 2))/0"

key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)
targets=(memory redis redis-unpipelined)
port() { case $1 in memory) echo "$PORT" ;; redis) echo $((PORT + 1)) ;; redis-unpipelined) echo $((PORT + 3)) ;; esac; }
args_for() {
	case $1 in
	memory) args=(--keys "$tmp/keys") ;;
	redis) args=(--keys "$tmp/keys" --redis "$redis_url" --redis-timeout "$REDIS_TIMEOUT") ;;
	redis-unpipelined) args=(--keys "$tmp/keys" --redis "$redis_url" --redis-timeout "$REDIS_TIMEOUT" --redis-pipeline=false) ;;
	esac
}
serve_each "${targets[@]}"
for t in redis redis-unpipelined; do
	curl -fs "http://127.0.0.1:$(port "$t")/api/v1/status" | grep -q '"ok":true' || die "serve ($t) does not reach Redis: $(cat "$tmp/serve.$t.log")"
done

load() { wrk_post "$1" "$2" "http://127.0.0.1:$(port "$1")/api/v1/lrn" -- rest "$key" "$tmp/numbers"; }
rounds "${targets[@]}"

mem_rps=$(field memory rps)
fallbacks() { curl -fs "http://127.0.0.1:$(port "$1")/metrics" | awk '$1 == "lnpdb_ratelimit_redis_fallback_total" { print $2 }'; }

mkdir -p "$(dirname "$results")"
{
	echo "# HTTP under load: the rate limit in memory and in Redis"
	echo
	machine "wrk, the three servers, Redis"
	echo
	echo "- table: \`lnpdb gen --ported $PORTED\`, $(wc -l <"$tmp/numbers") numbers walked"
	echo "- wrk: \`-t$THREADS -c$CONNS -d$DURATION --latency\`, loopback, REST \`/api/v1/lrn\` with \`include_enhanced_lrn\`, one key; median of $ROUNDS rounds"
	echo "- servers: \`lnpdb serve --keys\` with access log and metrics on; memory: the in-process limiter; redis: \`--redis\` ($(redis-server --version | awk '{print $3}' | sed 's/v=//') on loopback, no persistence), one script per request, pipelined; redis-unpipelined: \`--redis-pipeline=false\`"
	echo "- decisions taken locally (Redis unreachable or slower than --redis-timeout $REDIS_TIMEOUT): redis $(fallbacks redis), redis-unpipelined $(fallbacks redis-unpipelined)"
	echo
	echo "| limiter | requests/s | vs memory | p50 | p99 | non-2xx |"
	echo "|---|---:|---:|---:|---:|---:|"
	for t in "${targets[@]}"; do
		rps=$(field "$t" rps)
		printf '| %s | %.0f | %s | %s | %s | %d |\n' "$t" "$rps" "$(pct "$rps" "$mem_rps")" "$(ms "$(field "$t" p50_us)")" "$(ms "$(field "$t" p99_us)")" "$(total "$t" non2xx)"
	done
	echo
	echo "| round | limiter | requests/s | p50 | p99 | max |"
	echo "|---:|---|---:|---:|---:|---:|"
	round_table "${#targets[@]}"
} >"$results"
cat "$results"
log "wrote $results"
