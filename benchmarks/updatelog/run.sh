#!/usr/bin/env bash
# run.sh — three lnpdb serve nodes sharing one update log in PostgreSQL.
#
#   benchmarks/updatelog/run.sh            # → benchmarks/updatelog/results.md
#
# It builds lnpdb and benchmarks/cmd/updatelogload, generates a table with
# `lnpdb gen` and `lnpdb build`, starts a PostgreSQL server of its own
# (Debian's binaries, a temporary data directory, loopback) and three
# `lnpdb serve --updates-log` nodes, each on its own copy of the table, and
# measures:
#
#   propagation  updatelogload posts one-update feeds to node 1 at RATE/s
#                for DURATION (answered once durable in the log, ?wait=0)
#                and watches node 3's applied sequence: p50/p99 from the
#                post sent to node 3 having applied it
#   lookups      wrk on node 3 (REST /api/v1/lrn, enhanced), ROUNDS rounds
#                of each, interleaved: idle (nothing posted) and following
#                (updatelogload posting to node 1 at RATE/s meanwhile)
#
# wrk, the three nodes, PostgreSQL and the poster share the machine's cores.
#
# Settings, from the environment:
#   PORTED=1000000  RATE=1000  DURATION=10s (per round and for propagation)
#   ROUNDS=3  THREADS=1 CONNS=32   PORT=18460 (nodes on PORT, PORT+1, PORT+2; PostgreSQL on PORT+10)
#   TMPBASE=/tmp  KEEP=1 (keep the temporary directory)  RESULTS=FILE  COMMIT=…
#   PG_BIN=/usr/lib/postgresql/15/bin (default: the newest installed)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=1000000 RATE=1000 DURATION=10s ROUNDS=3 THREADS=1 CONNS=32 PORT=18460
results=${RESULTS:-$here/results.md}
secs=${DURATION%s}

need wrk "Debian package wrk"
need_postgres

bench_tmp updatelog
build_lnpdb updatelogload
gen_table "$tmp/table.lnpdb"
for n in 1 2 3; do mkdir "$tmp/node$n" && cp "$tmp/table.lnpdb" "$tmp/node$n/table.lnpdb"; done

# Lookups walk ~1000 ported numbers; updates give ported numbers the LRN
# and SPID of the row after them.
awk -F, -v every=$((PORTED / 1000 > 0 ? PORTED / 1000 : 1)) 'NR > 1 && (NR - 2) % every == 0 {
	tn = $1; if (length(tn) == 10) tn = "1" tn; print tn }' "$tmp/src/ported.csv" >"$tmp/numbers"
awk -F, 'NR > 2 && NR <= 100002 { print "U," prev_tn "," $2 "," $3 "," } NR > 1 { prev_tn = $1 }' "$tmp/src/ported.csv" >"$tmp/rows"

start_postgres $((PORT + 10))
dsn=$pg_dsn

key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)
admin=$("$tmp/lnpdb" key new --keys "$tmp/admin-keys" 2>/dev/null)
for n in 1 2 3; do
	"$tmp/lnpdb" serve --db "$tmp/node$n/table.lnpdb" --keys "$tmp/keys" --admin-keys "$tmp/admin-keys" \
		--addr "127.0.0.1:$((PORT + n - 1))" --access-log=false --log-format json \
		--updates-log "$dsn" --node "node$n" >"$tmp/node$n/serve.out" 2>"$tmp/node$n/serve.log" &
	pids+=($!)
done
for n in 1 2 3; do
	# Another process on the port would answer too: ask for this one's log.
	for _ in $(seq 100); do curl -fs "http://127.0.0.1:$((PORT + n - 1))/api/v1/status" 2>/dev/null | grep -q "\"node\":\"node$n\"" && break; sleep 0.1; done
	curl -fs "http://127.0.0.1:$((PORT + n - 1))/api/v1/status" | grep -q "\"node\":\"node$n\"" || die "node $n did not start: $(cat "$tmp/node$n/serve.log")"
done
node1=http://127.0.0.1:$PORT node3=http://127.0.0.1:$((PORT + 2))
pid3=${pids[2]}
# cpu3: node 3's CPU time so far, in clock ticks; seq3: its applied sequence.
cpu3() { awk '{ print $14 + $15 }' "/proc/$pid3/stat"; }
seq3() { curl -fs "$node3/api/v1/status" | sed -E 's/.*"applied_seq":([0-9]+).*/\1/'; }
hz=$(getconf CLK_TCK)

log "propagation: $RATE posts/s to node 1 for $DURATION, watching node 3"
"$tmp/updatelogload" -post "$node1" -watch "$node3" -admin "$admin" -rows "$tmp/rows" -rate "$RATE" -duration "$DURATION" \
	>"$tmp/propagation.out" 2>"$tmp/propagation.err" || die "updatelogload: $(tail "$tmp/propagation.err")"
prop=$(grep '^RESULT ' "$tmp/propagation.out" | sed 's/^RESULT //')
log "propagation: $prop"
load_prop=$(cut -d' ' -f1-3 /proc/loadavg)

wrkrun() { wrk_post "$1" "$DURATION" "$node3/api/v1/lrn" -- rest "$key" "$tmp/numbers" | sed -E 's/.*"rps":([0-9.]+).*/\1/'; }
idle=() following=() posted=() idle_cpu=() following_cpu=() applied=()
wrk_post warmup 3s "$node3/api/v1/lrn" -- rest "$key" "$tmp/numbers" >/dev/null
for r in $(seq "$ROUNDS"); do
	log "round $r: idle"
	c0=$(cpu3)
	idle+=("$(wrkrun "idle$r")")
	idle_cpu+=($(($(cpu3) - c0)))
	log "round $r: following ($RATE posts/s to node 1)"
	"$tmp/updatelogload" -post "$node1" -admin "$admin" -rows "$tmp/rows" -rate "$RATE" -duration "$DURATION" \
		>"$tmp/post$r.out" 2>"$tmp/post$r.err" &
	poster=$!
	c0=$(cpu3) s0=$(seq3)
	following+=("$(wrkrun "following$r")")
	following_cpu+=($(($(cpu3) - c0)))
	applied+=($(($(seq3) - s0)))
	wait "$poster" || die "updatelogload: $(tail "$tmp/post$r.err")"
	posted+=("$(grep '^RESULT ' "$tmp/post$r.out" | sed -E 's/.*"rate":([0-9.]+).*/\1/')")
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mi=$(median "${idle[@]}") mf=$(median "${following[@]}")
sleep 2 # the last posts reach node 3
status3=$(curl -fs "$node3/api/v1/status")
errors=$(cat "$tmp"/node*/serve.log | grep -c '"level":"ERROR"' || true)

mkdir -p "$(dirname "$results")"
{
	echo "# Three nodes sharing one update log"
	echo
	echo "Written by \`benchmarks/updatelog/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit;"
	echo "$(nproc) cores, shared by three lnpdb serve nodes, PostgreSQL, wrk, the poster and whatever else"
	echo "the machine ran (load average: $load_prop after the propagation run, $load_end at the end)."
	echo
	echo "- table: \`lnpdb gen --ported $PORTED\`, a copy per node; PostgreSQL $("$PG_BIN/postgres" --version | awk '{ print $3 }') with its defaults (synchronous_commit on)"
	echo "- updates: one-update feeds posted to node 1, \`?wait=0\` (answered once durable in the log), target $RATE/s"
	echo
	echo "## Propagation, node 1 → node 3"
	echo
	echo "From the post sent to node 1 until node 3's \`/api/v1/status\` shows the batch applied (polled every ~0.5 ms):"
	echo
	echo '```'
	echo "$prop"
	echo '```'
	echo
	echo "## Lookups on node 3: idle vs following the log"
	echo
	echo "wrk \`-t$THREADS -c$CONNS -d$DURATION\`, REST \`/api/v1/lrn\` enhanced, rounds interleaved:"
	echo
	echo "| round | idle requests/s | node 3 CPU µs/request | following requests/s | node 3 CPU µs/request | updates posted/s | batches node 3 applied |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for i in $(seq 0 $((ROUNDS - 1))); do
		printf '| %d | %.0f | %.1f | %.0f | %.1f | %.0f | %d |\n' $((i + 1)) "${idle[$i]}" \
			"$(awk -v c="${idle_cpu[$i]}" -v hz="$hz" -v r="${idle[$i]}" -v d="$secs" 'BEGIN { print c / hz * 1e6 / (r * d) }')" \
			"${following[$i]}" \
			"$(awk -v c="${following_cpu[$i]}" -v hz="$hz" -v r="${following[$i]}" -v d="$secs" 'BEGIN { print c / hz * 1e6 / (r * d) }')" \
			"${posted[$i]}" "${applied[$i]}"
	done
	echo
	echo "node 3 CPU µs/request is node 3's CPU time during the wrk run over the requests it answered: what"
	echo "following the log adds to each lookup's share of a core."
	echo
	echo "Medians: idle $(printf '%.0f' "$mi"), following $(printf '%.0f' "$mf") requests/s; following / idle $(awk -v a="$mf" -v b="$mi" 'BEGIN { printf "%.2f", a / b }')."
	echo "Node 3 at the end: \`$(echo "$status3" | sed -E 's/.*"update_log":(\{[^}]*\}).*/\1/')\`; errors logged by the nodes: $errors."
} >"$results"
cat "$results"
