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

PORTED=${PORTED:-100000}
THREADS=${THREADS:-1}
CONNS=${CONNS:-32}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-2s}
PORT=${PORT:-18280}
REDIS_TIMEOUT=${REDIS_TIMEOUT:-100ms}
TMPBASE=${TMPBASE:-/tmp}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname "$here")
repo=$(dirname "$bench")
results=${RESULTS:-$bench/results/redis.md}

log() { printf '%s http/redis.sh: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }

command -v go >/dev/null || die "no go on PATH"
command -v curl >/dev/null || die "no curl on PATH"
command -v wrk >/dev/null || die "no wrk on PATH (Debian: apt-get install -y wrk)"
command -v redis-server >/dev/null || die "no redis-server on PATH (Debian: apt-get install -y redis-server)"

tmp=$(mktemp -d "$TMPBASE/lnpdb-redis-XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ ${KEEP:-} == 1 ]]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

log "building lnpdb"
(cd "$repo" && go build -o "$tmp/lnpdb" ./cmd/lnpdb)
commit=${COMMIT:-$(cd "$repo" && git describe --always --dirty 2>/dev/null || echo unknown)}

log "generating and building a table of $PORTED ported numbers"
"$tmp/lnpdb" gen --ported "$PORTED" "$tmp/src" >"$tmp/gen.log" 2>&1 || die "gen failed: $(cat "$tmp/gen.log")"
"$tmp/lnpdb" build -o "$tmp/us.lnpdb" "$tmp/src" >"$tmp/build.log" 2>&1 || die "build failed: $(cat "$tmp/build.log")"
awk -F, -v every=$(( PORTED / 1000 > 0 ? PORTED / 1000 : 1 )) '
	NR > 1 && (NR - 2) % every == 0 {
		tn = $1; if (length(tn) == 10) tn = "1" tn
		print tn
		if (substr(tn, 11, 1) != "9") print substr(tn, 1, 10) (substr(tn, 11, 1) + 1)
	}' "$tmp/src/ported.csv" >"$tmp/numbers"

log "starting redis-server on 127.0.0.1:$((PORT + 2))"
redis-server --port $((PORT + 2)) --bind 127.0.0.1 --dir "$tmp" --save '' --appendonly no \
	--loglevel warning >"$tmp/redis.log" 2>&1 &
pids+=($!)
redis_url="redis://127.0.0.1:$((PORT + 2))/0"

key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)
targets=(memory redis redis-unpipelined)
port() { case $1 in memory) echo "$PORT" ;; redis) echo $((PORT + 1)) ;; redis-unpipelined) echo $((PORT + 3)) ;; esac; }
for t in "${targets[@]}"; do
	case $t in
	memory) args=() ;;
	redis) args=(--redis "$redis_url" --redis-timeout "$REDIS_TIMEOUT") ;;
	redis-unpipelined) args=(--redis "$redis_url" --redis-timeout "$REDIS_TIMEOUT" --redis-pipeline=false) ;;
	esac
	"$tmp/lnpdb" serve --db "$tmp/us.lnpdb" --keys "$tmp/keys" "${args[@]}" --addr "127.0.0.1:$(port "$t")" \
		--log-format json >"$tmp/serve.$t.out" 2>"$tmp/serve.$t.log" &
	pids+=($!)
done
for t in "${targets[@]}"; do
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$(port "$t")/api/v1/status" >/dev/null 2>&1 && break
		sleep 0.1
	done
	curl -fs "http://127.0.0.1:$(port "$t")/api/v1/status" >/dev/null || die "serve ($t) did not start: $(cat "$tmp/serve.$t.log")"
done
for t in redis redis-unpipelined; do
	curl -fs "http://127.0.0.1:$(port "$t")/api/v1/status" | grep -q '"ok":true' || die "serve ($t) does not reach Redis: $(cat "$tmp/serve.$t.log")"
done

load() {
	wrk -t"$THREADS" -c"$CONNS" -d"$2" --latency -s "$here/post.lua" "http://127.0.0.1:$(port "$1")/api/v1/lrn" \
		-- rest "$key" "$tmp/numbers" >"$tmp/wrk.$1.out" 2>&1 || die "wrk failed: $(cat "$tmp/wrk.$1.out")"
	grep '^RESULT ' "$tmp/wrk.$1.out" | sed 's/^RESULT //' || die "no result from wrk: $(cat "$tmp/wrk.$1.out")"
}
for t in "${targets[@]}"; do
	log "warming up $t ($WARMUP)"
	load "$t" "$WARMUP" >/dev/null
done
: >"$tmp/results"
for r in $(seq "$ROUNDS"); do
	for t in "${targets[@]}"; do
		log "round $r/$ROUNDS: $t ($DURATION)"
		printf '%s %s\n' "$t" "$(load "$t" "$DURATION")" >>"$tmp/results"
		tail -1 "$tmp/results" >&2
	done
done

field() {
	grep "^$1 " "$tmp/results" | sed -E "s/.*\"$2\":([0-9.]+).*/\1/" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
total() { grep "^$1 " "$tmp/results" | sed -E "s/.*\"$2\":([0-9.]+).*/\1/" | awk '{ s += $1 } END { print s + 0 }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f %%", 100 * a / b; else print "–" }'; }
mem_rps=$(field memory rps)
fallbacks() { curl -fs "http://127.0.0.1:$(port "$1")/metrics" | awk '$1 == "lnpdb_ratelimit_redis_fallback_total" { print $2 }'; }

mkdir -p "$(dirname "$results")"
{
	echo "# HTTP under load: the rate limit in memory and in Redis"
	echo
	echo "Written by \`benchmarks/http/redis.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit;"
	echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), shared by wrk, the three servers,"
	echo "Redis and whatever else the machine ran (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))."
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
	awk -v n="${#targets[@]}" '{
		t = $1; line = $0
		rps = line; sub(/.*"rps":/, "", rps); sub(/,.*/, "", rps)
		p50 = line; sub(/.*"p50_us":/, "", p50); sub(/,.*/, "", p50)
		p99 = line; sub(/.*"p99_us":/, "", p99); sub(/,.*/, "", p99)
		mx = line; sub(/.*"max_us":/, "", mx); sub(/,.*/, "", mx)
		printf "| %d | %s | %.0f | %.2f ms | %.2f ms | %.2f ms |\n", int((NR - 1) / n) + 1, t, rps, p50 / 1000, p99 / 1000, mx / 1000
	}' "$tmp/results"
} >"$results"
cat "$results"
log "wrote $results"
