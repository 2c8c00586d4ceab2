#!/usr/bin/env bash
# run.sh — lnpdb serve under load, beside a bare net/http handler, in one run.
#
#   benchmarks/http/run.sh            # → benchmarks/results/http.md
#
# It builds lnpdb and cmd/fixedjson, generates a table with `lnpdb gen` and
# `lnpdb build` in a temporary directory, creates a key whose rate limit
# cannot interfere, starts `lnpdb serve` (with its default access log, to a
# file) and the bare handler (answering the byte-for-byte body of a real
# enhanced LRN answer), and loads each on loopback with wrk, with the same
# settings, in turns:
#
#   rest         POST /api/v1/lrn {"phone_number":…,"include_enhanced_lrn":true}
#   graphql      POST /graphql lookupLrn(phoneNumber:…, includeEnhancedLrn: true), the query sent whole
#   graphql-apq  the same as an automatic persisted query: its hash and the variables
#   bulk         POST /api/v1/lrn/bulk, 1,000 numbers with include_enhanced_lrn, no compression
#   bulk-gzip    the same with Accept-Encoding: gzip
#   bare         POST to the bare handler, same body as rest, same headers
#
# After the rounds, the in-process figure beside bulk: lrn.LookupMany on a
# table of the same size (go test ./lrn -bench LargeBatch), per number.
#
# The numbers walked are a spread of the table's ported numbers and their
# neighbours (mostly not ported: answered from the block or code rows).
# Every figure is the median of ROUNDS rounds; each round runs the three
# targets back to back, so that a change in the machine's load touches all
# three. wrk and the servers share the machine's cores.
#
# Settings, from the environment:
#   PORTED=1000000     ported numbers in the generated table
#   THREADS=1 CONNS=32 DURATION=15s   wrk -t -c -d
#   ROUNDS=3           rounds; figures are medians
#   TARGETS="rest graphql graphql-apq bulk bulk-gzip bare"
#   WARMUP=3s          an unrecorded wrk run per target before the first round
#   ACCESS_LOG=true    lnpdb serve --access-log
#   PORT=18080 BARE_PORT=18091
#   TMPBASE=/tmp KEEP=1 (keep the temporary directory)
#   COMMIT=…           what the results name as the code measured (default:
#                      git describe --always --dirty)
#   RESULTS=FILE       where the table goes (default: ../results/http.md)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=1000000 THREADS=1 CONNS=32 DURATION=15s ROUNDS=3 WARMUP=3s \
	ACCESS_LOG=true PORT=18080 BARE_PORT=18091
results=${RESULTS:-$bench/results/http.md}

need go
need curl
need wrk "Debian: apt-get update && apt-get install -y wrk"

bench_tmp http
build_lnpdb fixedjson
gen_table "$tmp/us.lnpdb"
walk_numbers
log "$(wc -l <"$tmp/numbers") numbers to walk"

key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)

log "starting lnpdb serve on 127.0.0.1:$PORT"
"$tmp/lnpdb" serve --db "$tmp/us.lnpdb" --keys "$tmp/keys" --addr "127.0.0.1:$PORT" \
	--access-log="$ACCESS_LOG" --log-format json >"$tmp/serve.out" 2>"$tmp/serve.log" &
pids+=($!)
serve_pid=$!
await_http "lnpdb serve" "$tmp/serve.log" "http://127.0.0.1:$PORT/api/v1/status"

# The bare handler answers with a real answer's bytes.
first=$(head -1 "$tmp/numbers")
curl -fs "http://127.0.0.1:$PORT/api/v1/lrn" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	-d "{\"phone_number\":\"$first\",\"include_enhanced_lrn\":true}" >"$tmp/answer.json" || die "the first lookup failed"
log "bare handler body: $(wc -c <"$tmp/answer.json") bytes"
"$tmp/fixedjson" -addr "127.0.0.1:$BARE_PORT" -body "$tmp/answer.json" 2>"$tmp/fixedjson.log" &
pids+=($!)
bare_pid=$!
await_http "the bare handler" "$tmp/fixedjson.log" -X POST "http://127.0.0.1:$BARE_PORT/"

url() {
	case $1 in
	rest) echo "http://127.0.0.1:$PORT/api/v1/lrn" ;;
	graphql | graphql-apq) echo "http://127.0.0.1:$PORT/graphql" ;;
	bulk | bulk-gzip) echo "http://127.0.0.1:$PORT/api/v1/lrn/bulk" ;;
	bare) echo "http://127.0.0.1:$BARE_PORT/" ;;
	esac
}
kind() { [[ $1 == bare ]] && echo rest || echo "$1"; }

# The GraphQL operation (no double quotes: post.lua puts it in JSON as it
# is), and its persisted-query hash, registered once.
query='query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true) { lrn lrn_activated_at enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn } } }'
hash=$(printf '%s' "$query" | sha256sum | cut -d' ' -f1)
curl -fs "http://127.0.0.1:$PORT/graphql" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	-d "{\"query\":\"$query\",\"variables\":{\"n\":\"$first\"},\"extensions\":{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"$hash\"}}}" |
	grep -q '"lrn":"1' || die "registering the persisted query failed"

# cpu PID prints the CPU time (user + system) PID has used, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
tick_us=$(awk -v t="$(getconf CLK_TCK)" 'BEGIN { print 1e6 / t }')

# load TARGET DURATION prints wrk's RESULT line, with the CPU time the
# target's server used per request (cpu_us): unlike requests/s, it hardly
# moves with what else the machine runs.
load() {
	local pid=$serve_pid c0 c1 line
	[[ $1 == bare ]] && pid=$bare_pid
	c0=$(cpu "$pid")
	line=$(wrk_post "$1" "$2" "$(url "$1")" -- "$(kind "$1")" "$key" "$tmp/numbers" "$query" "$hash")
	c1=$(cpu "$pid")
	awk -v l="$line" -v c="$((c1 - c0))" -v t="$tick_us" 'BEGIN {
		n = l; sub(/.*"requests":/, "", n); sub(/,.*/, "", n)
		sub(/}$/, "", l); printf("%s,\"cpu_us\":%.2f}\n", l, (n > 0 ? c * t / n : 0)) }'
}

read -r -a targets <<<"${TARGETS:-rest graphql graphql-apq bulk bulk-gzip bare}"
rounds "${targets[@]}"

# of_bare TARGET prints TARGET's requests/s as a share of the bare
# handler's in each round: a ratio target is met only when every round
# meets it.
of_bare() {
	awk -v t="$1" -v n="${#targets[@]}" '{
		r = int((NR - 1) / n); v = $0; sub(/.*"rps":/, "", v); sub(/,.*/, "", v)
		if ($1 == t) a[r] = v; if ($1 == "bare") b[r] = v
	} END { for (i = 0; i in a; i++) printf "%s%.0f %%", i ? ", " : "", (i in b && b[i] > 0) ? 100 * a[i] / b[i] : 0 }' "$tmp/results"
}

bare_rps=$(field bare rps)
bare_p50=$(field bare p50_us)
bare_p99=$(field bare p99_us)

log "in-process lrn.LookupMany on a table of $PORTED ported numbers"
many_ns=$(cd "$repo" && go test ./lrn -run '^$' -bench 'LargeBatch/LookupMany/enhanced$' -benchtime 2s -bench.ported "$PORTED" 2>&1 |
	sed -nE 's/.* ([0-9.]+) ns\/number.*/\1/p' | head -1)

rest_rps=$(field rest rps)
rest_p99=$(field rest p99_us)
verdict_rps=$(awk -v a="$rest_rps" -v b="$bare_rps" 'BEGIN { print (a >= 0.5 * b) ? "met" : "missed" }')
verdict_p99=$(awk -v u="$rest_p99" -v w="$(worst rest p99_us)" -v b="$bare_p99" 'BEGIN {
	if (w <= 10000) print "met"
	else if (u <= 10000) printf "not shown: the median is under 10 ms, a round reached %.2f ms (inside the noise)", w / 1000
	else if (b > 10000) printf "missed, as by the bare handler (p99 %.2f ms): the machine was busy, run again when it is quiet", b / 1000
	else print "missed" }')

mkdir -p "$(dirname "$results")"
{
	echo "# HTTP under load: lnpdb serve beside a bare handler"
	echo
	machine "wrk, the servers"
	echo "Absolute figures move with that load; the ratios, measured in the same rounds, are the result."
	echo
	echo "- table: \`lnpdb gen --ported $PORTED\`, $(wc -l <"$tmp/numbers") numbers walked (ported numbers and their neighbours)"
	echo "- wrk: \`-t$THREADS -c$CONNS -d$DURATION --latency\`, loopback, POST with \`Authorization: Bearer\`; median of $ROUNDS rounds"
	echo "- lnpdb serve: access log $( [[ $ACCESS_LOG == true ]] && echo on, JSON to a file || echo off ), metrics on, rate limit per key (not reached)"
	echo "- bare: \`benchmarks/cmd/fixedjson\`, a net/http handler writing the $(wc -c <"$tmp/answer.json")-byte body of a real enhanced LRN answer"
	echo
	echo "| target | requests/s | vs bare | p50 | vs bare | p99 | vs bare | non-2xx | server CPU per request | vs bare |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for t in "${targets[@]}"; do
		case $t in
		rest) name='REST `/api/v1/lrn`, enhanced' ;;
		graphql) name='GraphQL `lookupLrn`, enhanced, query sent whole' ;;
		graphql-apq) name='GraphQL `lookupLrn`, enhanced, persisted query (APQ)' ;;
		bulk) name='REST `/api/v1/lrn/bulk`, 1,000 numbers, enhanced' ;;
		bulk-gzip) name='the same, gzip answer' ;;
		bare) name='bare net/http, fixed JSON' ;;
		esac
		rps=$(field "$t" rps) p50=$(field "$t" p50_us) p99=$(field "$t" p99_us) cpu_us=$(field "$t" cpu_us)
		printf '| %s | %.0f | %s | %s | %s | %s | %s | %d | %.1f µs | %s |\n' "$name" "$rps" "$(pct "$rps" "$bare_rps")" \
			"$(ms "$p50")" "$(ratio "$p50" "$bare_p50")" "$(ms "$p99")" "$(ratio "$p99" "$bare_p99")" \
			"$(total "$t" non2xx)" "$cpu_us" "$(ratio "$cpu_us" "$(field bare cpu_us)")"
	done
	echo
	if grep -q '^bulk' "$tmp/results"; then
		echo "Numbers per second (a bulk request answers 1,000; a single request one):"
		echo
		echo "| how | numbers/s |"
		echo "|---|---:|"
		for t in rest graphql-apq bulk bulk-gzip; do
			grep -q "^$t " "$tmp/results" || continue
			per=1; [[ $t == bulk* ]] && per=1000
			printf '| %s | %.0f |\n' "$t over HTTP" "$(awk -v r="$(field "$t" rps)" -v p="$per" 'BEGIN { print r * p }')"
		done
		[[ -n $many_ns ]] && printf '| lrn.LookupMany in process, enhanced, one core | %.0f |\n' "$(awk -v n="$many_ns" 'BEGIN { print 1e9 / n }')"
		echo
	fi
	echo "Each column is the median of its own figure over the rounds; the rounds:"
	echo
	echo "| round | target | requests/s | p50 | p99 | max | server CPU per request |"
	echo "|---:|---|---:|---:|---:|---:|---:|"
	round_table "${#targets[@]}"
	echo
	echo "Targets (ARCHITECTURE.md): REST ≥ 50 % of the bare handler's requests/s — $verdict_rps;"
	echo "REST p99 ≤ 10 ms — $verdict_p99."
	if grep -q '^graphql-apq ' "$tmp/results"; then
		echo "GraphQL \`lookupLrn\` enhanced with APQ ≥ 50 % of the bare handler — $(awk -v a="$(field graphql-apq rps)" -v b="$bare_rps" 'BEGIN { print (a >= 0.5 * b) ? "met" : "missed" }') by the medians;"
		echo "by round: $(of_bare graphql-apq) (REST: $(of_bare rest))."
	fi
	if grep -q '^bulk ' "$tmp/results"; then
		echo "Bulk ≥ 500,000 numbers/s, enhanced, no compression — $(awk -v r="$(field bulk rps)" 'BEGIN { print (r * 1000 >= 500000) ? "met" : "missed" }')."
	fi
	printf 'Socket errors over all rounds:'
	for t in "${targets[@]}"; do printf ' %s %s' "$t" "$(total "$t" socket_errors)"; done
	echo "."
} >"$results"
cat "$results"
log "wrote $results"
