#!/usr/bin/env bash
# console.sh — what the operator console costs a serving node: lookups per
# second of one lnpdb serve with an admin refreshing the console's charts
# every second, against the same server with nobody on the console, in one
# run.
#
#   benchmarks/http/console.sh        # → benchmarks/results/console.md
#
# It builds lnpdb, generates and builds a table, starts one `lnpdb serve
# --keys … --admin-keys …` (access log off), signs an admin in to
# /console with curl, and loads POST /api/v1/lrn with wrk (http/post.lua,
# enhanced) in rounds that alternate three targets on the same server:
#
#   quiet    nobody on the console
#   console  a curl loop GETs /console/front-ends (the charts drawn from
#            the history sampler) and /console every second, with the
#            admin's session cookie, for the whole round
#   control  the same curl loop GETs /ui/style.css twice a second: what
#            the viewer's own processes cost the shared cores, with next
#            to no work for the server
#
# The console's cost is console against control; control against quiet is
# what running a viewer on the load generator's machine costs. Every
# figure is the median of ROUNDS rounds; the targets alternate within each
# round, so that the machine's load touches all three.
#
# Settings, from the environment:
#   PORTED=200000 THREADS=1 CONNS=32 DURATION=10s ROUNDS=5 WARMUP=3s PORT=18082
#   TMPBASE=/tmp KEEP=1 COMMIT=… RESULTS=FILE (default: ../results/console.md)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=200000 THREADS=1 CONNS=32 DURATION=10s ROUNDS=5 WARMUP=3s PORT=18082
results=${RESULTS:-$bench/results/console.md}

need go
need curl
need wrk "Debian: apt-get update && apt-get install -y wrk"

bench_tmp console
build_lnpdb
gen_table "$tmp/us.lnpdb"
walk_numbers
key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)
admin=$("$tmp/lnpdb" key new --keys "$tmp/admin-keys" 2>/dev/null)

log "starting lnpdb serve on 127.0.0.1:$PORT"
"$tmp/lnpdb" serve --db "$tmp/us.lnpdb" --keys "$tmp/keys" --admin-keys "$tmp/admin-keys" \
	--addr "127.0.0.1:$PORT" --access-log=false --log-format json >"$tmp/serve.out" 2>"$tmp/serve.log" &
pids+=($!)
serve_pid=$!
await_http "lnpdb serve" "$tmp/serve.log" "http://127.0.0.1:$PORT/api/v1/status"

base="http://127.0.0.1:$PORT"
[[ $(curl -s -o /dev/null -w '%{http_code}' -c "$tmp/jar" -d "key=$admin" "$base/console/sign-in") == 303 ]] ||
	die "the admin could not sign in to the console"
[[ $(curl -s -o /dev/null -w '%{http_code}' -b "$tmp/jar" "$base/console/front-ends") == 200 ]] ||
	die "the console's front-end page did not answer 200"

# viewer PATH1 PATH2 GETs both paths every second until killed, counting
# pages.
viewer() {
	local n=0
	while :; do
		curl -fs -o /dev/null -b "$tmp/jar" "$base$1" && n=$((n + 1))
		curl -fs -o /dev/null -b "$tmp/jar" "$base$2" && n=$((n + 1))
		echo "$n" >"$tmp/pages"
		sleep 1
	done
}

cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
tick_us=$(awk -v t="$(getconf CLK_TCK)" 'BEGIN { print 1e6 / t }')

load() {
	local c0 c1 line vpid=
	case $1 in
	console)
		viewer /console/front-ends /console &
		vpid=$!
		;;
	control)
		viewer /ui/style.css /ui/style.css &
		vpid=$!
		;;
	esac
	c0=$(cpu "$serve_pid")
	line=$(wrk_post "$1" "$2" "$base/api/v1/lrn" -- rest "$key" "$tmp/numbers")
	c1=$(cpu "$serve_pid")
	if [[ -n $vpid ]]; then
		kill "$vpid"
		wait "$vpid" 2>/dev/null || true
	fi
	awk -v l="$line" -v c="$((c1 - c0))" -v t="$tick_us" 'BEGIN {
		n = l; sub(/.*"requests":/, "", n); sub(/,.*/, "", n)
		sub(/}$/, "", l); printf("%s,\"cpu_us\":%.2f}\n", l, (n > 0 ? c * t / n : 0)) }'
}

rounds quiet console control
pages=$(cat "$tmp/pages" 2>/dev/null || echo 0)

# by_round A B NAME prints A's NAME against B's in each round, in %.
by_round() {
	awk -v a="$1" -v b="$2" -v f="$3" '{ v = $0; sub(".*\"" f "\":", "", v); sub(/[,}].*/, "", v); x[$1] = v }
		$1 == "control" { printf "%s%+.1f %%", (n++ ? ", " : ""), 100 * (x[a] - x[b]) / x[b] }' "$tmp/results"
}
pctdiff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", 100 * (a - b) / b }'; }

mkdir -p "$(dirname "$results")"
{
	echo "# What the operator console costs a serving node"
	echo
	machine "wrk, curl and the server"
	echo
	echo "- table: \`lnpdb gen --ported $PORTED\`, $(wc -l <"$tmp/numbers") numbers walked"
	echo "- load: wrk \`-t$THREADS -c$CONNS -d$DURATION --latency\` with \`http/post.lua rest\` (POST /api/v1/lrn, enhanced), loopback; median of $ROUNDS rounds"
	echo "- console: an admin session (curl with its cookie) GETs \`/console/front-ends\` and \`/console\` once a second for the whole round; control: the same loop GETs \`/ui/style.css\` twice a second ($pages pages in the last round)"
	echo "- lnpdb serve: \`--keys\` (one key, its limit not reached), \`--admin-keys\`, access log off, the history sampler on (as always)"
	echo
	echo "| target | requests/s | p50 | p99 | server CPU per request |"
	echo "|---|---:|---:|---:|---:|"
	for t in quiet console control; do
		printf '| %s | %.0f | %s | %s | %.1f µs |\n' "$t" "$(field "$t" rps)" "$(ms "$(field "$t" p50_us)")" "$(ms "$(field "$t" p99_us)")" "$(field "$t" cpu_us)"
	done
	echo
	echo "The console's cost (console against control), by round: requests/s $(by_round console control rps), server CPU per request $(by_round console control cpu_us);"
	echo "by the medians: requests/s $(pctdiff "$(field console rps)" "$(field control rps)"), CPU per request $(pctdiff "$(field console cpu_us)" "$(field control cpu_us)")."
	echo "A viewer's processes on the same cores (control against quiet): requests/s $(by_round control quiet rps) by round, $(pctdiff "$(field control rps)" "$(field quiet rps)") by the medians."
	echo
	echo "| round | target | requests/s | p50 | p99 | max | server CPU per request |"
	echo "|---:|---|---:|---:|---:|---:|---:|"
	round_table 3
} >"$results"
log "wrote $results"
cat "$results"
