#!/usr/bin/env bash
# run.sh — lnpdb and its peers side by side, for one table size.
#
#   benchmarks/run.sh 1000000      # 1M ported numbers → results/1M.{md,png,json}
#
# It installs what it needs (redis-server and /usr/bin/time from Debian, Go
# modules through the proxy), generates a source directory with `lnpdb gen`
# into a temporary directory, builds the table with `lnpdb build` (both
# under /usr/bin/time -v), starts a private Redis server on 127.0.0.1, runs
# the harness (cmd/lnpdb-bench: load the peers, check that every system
# gives the same answers, time them all with the memory floor), writes
# results/LABEL.md, .png and .json and results/summary.md, then stops Redis
# and deletes the temporary directory.
#
# Settings, from the environment:
#   RUNS=10             rounds of every benchmark; figures are medians
#   MIXES=probe,random-vacant
#                       query mixes, one harness run each: probe (the vacant
#                       quarter in vacant codes of NPAs holding ported
#                       numbers; results/LABEL.*) and random-vacant (vacant
#                       numbers anywhere; results/LABEL-random-vacant.*)
#   MIX2_SYSTEMS=lnpdb,map
#                       systems of every mix after the first (the peers'
#                       figures hardly depend on the mix)
#   LNPDB_VARIANTS=default
#                       lnpdb configurations (bench.Variants), e.g.
#                       default,verify: each opened once more and timed
#   BENCHTIME=500ms     time per benchmark per round
#   SYSTEMS=lnpdb,map,sqlite,redis,bbolt
#   SKIP='redis=reason' systems not run, with the reason the table gives
#   LOAD_TIMEOUT=20m    time box for one peer's load (past it: "did not fit")
#   GEN_TIMEOUT=40m BUILD_TIMEOUT=40m HARNESS_TIMEOUT=4h
#   REDIS_MAXMEMORY     bytes (default: 25 % of MemAvailable at start)
#   GOMEMLIMIT          the harness's Go memory limit (default: 45 % of
#                       MemAvailable): it holds the source rows and the map
#                       reference, and without a limit its garbage can grow
#                       the heap to twice that, past the machine beside Redis
#   QUERIES=1048576     queries in the sequence (a power of two)
#   SEED=1              lnpdb gen --seed
#   TMPBASE=/tmp        where the temporary directory goes
#   KEEP=1              keep the temporary directory
#   RESULTS=DIR         where results go (default: results/ beside this script)
set -euo pipefail

N=${1:?usage: run.sh PORTED_NUMBERS   e.g. run.sh 1000000}
[[ $N =~ ^[0-9]+$ ]] || { echo "run.sh: $N is not a number" >&2; exit 2; }
RUNS=${RUNS:-10}
BENCHTIME=${BENCHTIME:-500ms}
SYSTEMS=${SYSTEMS:-lnpdb,map,sqlite,redis,bbolt}
MIXES=${MIXES:-probe,random-vacant}
MIX2_SYSTEMS=${MIX2_SYSTEMS:-lnpdb,map}
LNPDB_VARIANTS=${LNPDB_VARIANTS:-default}
SKIP=${SKIP:-}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-20m}
QUERIES=${QUERIES:-1048576}
SEED=${SEED:-1}
TMPBASE=${TMPBASE:-/tmp}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
results=${RESULTS:-$here/results}

if (( N % 1000000 == 0 )); then label=$((N / 1000000))M
elif (( N % 1000 == 0 )); then label=$((N / 1000))k
else label=$N; fi

log() { printf '%s run.sh: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }

wants() { [[ ",$SYSTEMS," == *",$1,"* && ";$SKIP;" != *";$1="* ]]; }

# What the machine needs.
command -v go >/dev/null || die "no go on PATH"
pkgs=()
[[ -x /usr/bin/time ]] || pkgs+=(time)
if wants redis && ! command -v redis-server >/dev/null; then pkgs+=(redis-server); fi
if (( ${#pkgs[@]} )); then
	log "installing ${pkgs[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

# Room: CSVs ~65 B, table ~15 B, SQLite ~30 B, bbolt up to ~85 B per number.
avail=$(df --output=avail -B1 "$TMPBASE" | tail -1)
need=$(( N * 250 + (1 << 30) ))
(( avail > need )) || die "needs about $((need >> 30)) GiB free in $TMPBASE, has $((avail >> 30)) GiB"

work=$(mktemp -d "$TMPBASE/lnpdb-bench-XXXXXX")
redis_pid=
cleanup() {
	if [[ -n $redis_pid ]]; then
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
	fi
	if [[ ${KEEP:-} == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
log "size $label ($N ported numbers), work dir $work"

log "building lnpdb, lnpdb-bench and lnpdb-report"
(cd "$repo" && go build -o "$work/bin/lnpdb" ./cmd/lnpdb)
(cd "$here" && go build -o "$work/bin/" ./cmd/lnpdb-bench ./cmd/lnpdb-report)

# seconds and peak RSS (bytes) from a /usr/bin/time -v report
elapsed() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.3f\n", s }' "$1"; }
maxrss() { awk -F': ' '/Maximum resident set size/ { printf "%.0f\n", $2 * 1024 }' "$1"; }

log "lnpdb gen --ported $N"
/usr/bin/time -v -o "$work/gen.time" timeout "${GEN_TIMEOUT:-40m}" \
	"$work/bin/lnpdb" gen --seed "$SEED" --ported "$N" "$work/src" >"$work/gen.log" 2>/dev/null ||
	die "lnpdb gen failed: $(cat "$work/gen.log" "$work/gen.time" | tail -5)"
cat "$work/gen.log" >&2
log "lnpdb build"
/usr/bin/time -v -o "$work/build.time" timeout "${BUILD_TIMEOUT:-40m}" \
	"$work/bin/lnpdb" build -o "$work/table.lnpdb" "$work/src" >"$work/build.log" 2>/dev/null ||
	die "lnpdb build failed: $(cat "$work/build.log" "$work/build.time" | tail -5)"
cat "$work/build.log" >&2
cat >"$work/build-info.json" <<EOF
{"gen_seconds": $(elapsed "$work/gen.time"), "gen_bytes": $(du -sb "$work/src" | cut -f1), "gen_peak_rss_bytes": $(maxrss "$work/gen.time"),
 "build_seconds": $(elapsed "$work/build.time"), "build_peak_rss_bytes": $(maxrss "$work/build.time")}
EOF

redis_addr=
if wants redis; then
	port=
	for _ in $(seq 50); do
		p=$(( 20000 + RANDOM % 20000 ))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
	done
	[[ -n $port ]] || die "no free port for Redis"
	maxmem=${REDIS_MAXMEMORY:-$(awk '/MemAvailable/ { printf "%.0f", $2 * 1024 * 0.25 }' /proc/meminfo)}
	mkdir -p "$work/redis"
	redis-server --bind 127.0.0.1 --port "$port" --dir "$work/redis" --save '' --appendonly no \
		--maxmemory "$maxmem" --maxmemory-policy noeviction --daemonize no \
		--logfile "$work/redis/redis.log" &
	redis_pid=$!
	for _ in $(seq 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	redis-cli -p "$port" ping >/dev/null || die "Redis did not start: $(tail -5 "$work/redis/redis.log")"
	redis_addr=127.0.0.1:$port
	log "redis-server $(redis-server --version | awk '{print $3}') on $redis_addr (pid $redis_pid, maxmemory $((maxmem >> 20)) MiB)"
fi

mkdir -p "$results"
first=1
IFS=, read -ra mixes <<<"$MIXES"
for mix in "${mixes[@]}"; do
	systems=$SYSTEMS
	if (( ! first )); then
		systems=
		for s in ${SYSTEMS//,/ }; do
			if [[ ",$MIX2_SYSTEMS," == *",$s,"* ]]; then systems+=${systems:+,}$s; fi
		done
	fi
	first=0
	name=$label
	[[ $mix == probe ]] || name=$label-$mix
	log "harness, $mix query mix ($systems): $RUNS runs × ${BENCHTIME} per benchmark"
	GOMEMLIMIT=${GOMEMLIMIT:-$(awk '/MemAvailable/ { printf "%.0f", $2 * 1024 * 0.45 }' /proc/meminfo)} \
		timeout "${HARNESS_TIMEOUT:-4h}" "$work/bin/lnpdb-bench" \
		-src "$work/src" -table "$work/table.lnpdb" -work "$work" -redis "$redis_addr" \
		-out "$results/$name.json" -label "$label" -seed "$SEED" -mix "$mix" \
		-runs "$RUNS" -benchtime "$BENCHTIME" -queries "$QUERIES" \
		-systems "$systems" -skip "$SKIP" -load-timeout "$LOAD_TIMEOUT" \
		-lnpdb-variants "$LNPDB_VARIANTS" -build-info "$work/build-info.json"
	"$work/bin/lnpdb-report" -in "$results/$name.json" -md "$results/$name.md" -png "$results/$name.png"
	log "wrote $results/$name.md, $name.png, $name.json"
done
"$work/bin/lnpdb-report" -summary "$results/summary.md" "$results"/*.json
log "wrote $results/summary.md"
