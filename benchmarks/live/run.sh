#!/usr/bin/env bash
# run.sh — lnpdb serve under load while its table changes under it.
#
#   benchmarks/live/run.sh            # → benchmarks/live/results.md
#
# It builds lnpdb, generates a table with `lnpdb gen` and `lnpdb build` in a
# temporary directory (and a second build of the same source, a different
# file), creates a lookup key whose rate limit cannot interfere and an admin
# key, starts `lnpdb serve --admin-keys` and loads it on loopback with wrk
# (REST POST /api/v1/lrn with include_enhanced_lrn, http/post.lua) twice, back to
# back, with the same settings:
#
#   quiet   nothing changes
#   live    a loop replaces the table file by rename (cp to a temporary name
#           beside it, mv over it) every SWAP_EVERY seconds, alternating the
#           two builds, and posts FEED_ROWS-row update feeds (U rows: a
#           ported number takes another's LRN and SPID) to
#           POST /admin/v1/updates every FEED_EVERY seconds
#
# and reports requests/s, p50 and p99 of both, their ratios, wrk's non-2xx
# responses and socket errors, the reloads and compactions the server
# logged and the update posts that failed. wrk, the server and the loop
# share the machine's cores.
#
# Settings, from the environment:
#   PORTED=1000000     ported numbers in the generated table
#   THREADS=1 CONNS=32 DURATION=20s   wrk -t -c -d
#   WARMUP=3s          an unrecorded wrk run first
#   SWAP_EVERY=2       seconds between replacements of the file
#   FEED_EVERY=0.5     seconds between update posts
#   FEED_ROWS=100      updates per post
#   COMPACT_AT=100000  lnpdb serve --compact-at
#   PORT=18180  TMPBASE=/tmp  KEEP=1 (keep the temporary directory)
#   RESULTS=FILE       where the table goes (default: results.md beside this script)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=1000000 THREADS=1 CONNS=32 DURATION=20s WARMUP=3s SWAP_EVERY=2 \
	FEED_EVERY=0.5 FEED_ROWS=100 COMPACT_AT=100000 PORT=18180
results=${RESULTS:-$here/results.md}

need go
need curl
need wrk "Debian: apt-get update && apt-get install -y wrk"

bench_tmp live
at_exit+=('touch "$tmp/stop"')
build_lnpdb
gen_table "$tmp/a.lnpdb" "$tmp/b.lnpdb"
cp "$tmp/a.lnpdb" "$tmp/live.lnpdb"
walk_numbers

# Update feeds: every ported number in turn takes the LRN and SPID of the
# row after it, FEED_ROWS rows per feed.
mkdir "$tmp/feeds"
awk -F, 'NR > 2 && NR <= 200002 { print "U," prev_tn "," $2 "," $3 "," } NR > 1 { prev_tn = $1 }' "$tmp/src/ported.csv" |
	split -l "$FEED_ROWS" -a 5 - "$tmp/feeds/rows."
for f in "$tmp"/feeds/rows.*; do
	{ echo "action,tn,lrn,spid,activated_at"; cat "$f"; } >"${f/rows./feed.}"
	rm "$f"
done
feeds=("$tmp"/feeds/feed.*)
log "${#feeds[@]} feeds of $FEED_ROWS updates ready"

key=$("$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 2000000000 2>/dev/null)
admin=$("$tmp/lnpdb" key new --keys "$tmp/admin-keys" 2>/dev/null)

log "starting lnpdb serve on 127.0.0.1:$PORT"
"$tmp/lnpdb" serve --db "$tmp/live.lnpdb" --keys "$tmp/keys" --admin-keys "$tmp/admin-keys" \
	--addr "127.0.0.1:$PORT" --access-log=false --log-format json --compact-at "$COMPACT_AT" \
	>"$tmp/serve.out" 2>"$tmp/serve.log" &
pids+=($!)
await_http "lnpdb serve" "$tmp/serve.log" "http://127.0.0.1:$PORT/api/v1/status"

# changer replaces the file and posts feeds until $tmp/stop exists; it
# counts what it did in $tmp/swaps and $tmp/posts (one HTTP status a line).
changer() {
	local per_swap tick=0 swap=0 feed=0 code
	per_swap=$(awk -v s="$SWAP_EVERY" -v f="$FEED_EVERY" 'BEGIN { n = int(s / f + 0.5); print (n < 1) ? 1 : n }')
	: >"$tmp/swaps"
	: >"$tmp/posts"
	while [[ ! -e $tmp/stop ]]; do
		if ((tick % per_swap == 0)); then
			if ((swap % 2 == 0)); then cp "$tmp/b.lnpdb" "$tmp/.incoming"; else cp "$tmp/a.lnpdb" "$tmp/.incoming"; fi
			mv -f "$tmp/.incoming" "$tmp/live.lnpdb"
			swap=$((swap + 1))
			echo "$swap" >>"$tmp/swaps"
		fi
		code=$(curl -s -o "$tmp/post.out" -w '%{http_code}' "http://127.0.0.1:$PORT/admin/v1/updates" \
			-H "Authorization: Bearer $admin" -H 'Content-Type: text/csv' \
			--data-binary @"${feeds[feed % ${#feeds[@]}]}" || echo 000)
		[[ $code == 200 ]] || log "update post failed: $code $(cat "$tmp/post.out")"
		echo "$code" >>"$tmp/posts"
		feed=$((feed + 1))
		tick=$((tick + 1))
		sleep "$FEED_EVERY"
	done
}

# load NAME DURATION runs wrk (http/post.lua's REST lookups) and keeps its
# RESULT line in tmp/result.NAME.
load() { wrk_post "$1" "$2" "http://127.0.0.1:$PORT/api/v1/lrn" -- rest "$key" "$tmp/numbers" >"$tmp/result.$1"; }
result() { sed -E "s/.*\"$2\":([0-9.]+).*/\1/" "$tmp/result.$1"; }

log "warming up ($WARMUP)"
load warmup "$WARMUP"
log "quiet: nothing changes ($DURATION)"
load quiet "$DURATION"
log "live: replacing the file every ${SWAP_EVERY}s, posting $FEED_ROWS updates every ${FEED_EVERY}s ($DURATION)"
reloads_before=$(grep -c '"msg":"table reloaded"' "$tmp/serve.log" || true)
changer &
changer_pid=$!
pids+=($changer_pid)
load live "$DURATION"
touch "$tmp/stop"
wait "$changer_pid" || true
sleep 1.5 # the last replacement's reload
cat "$tmp/wrk.live.out" >&2

swaps=$(wc -l <"$tmp/swaps")
posts=$(wc -l <"$tmp/posts")
failed_posts=$(grep -vc '^200$' "$tmp/posts" || true)
reloads=$(($(grep -c '"msg":"table reloaded"' "$tmp/serve.log" || true) - reloads_before))
compactions=$(grep -c '"msg":"compaction done"' "$tmp/serve.log" || true)
errors=$(grep -c '"level":"ERROR"' "$tmp/serve.log" || true)
wrk_non2xx() { grep -E 'Non-2xx or 3xx responses' "$tmp/wrk.$1.out" | awk '{ print $NF }' || true; }

quiet_non2xx=$(wrk_non2xx quiet)
live_non2xx=$(wrk_non2xx live)

mkdir -p "$(dirname "$results")"
{
	echo "# lnpdb serve while its table changes"
	echo
	machine "wrk, the server, the change loop"
	echo "Absolute figures move with that load; the ratios, measured back to back, are the result."
	echo
	echo "- table: \`lnpdb gen --ported $PORTED\`, $(wc -l <"$tmp/numbers") numbers walked (ported numbers and their neighbours)"
	echo "- wrk: \`-t$THREADS -c$CONNS -d$DURATION --latency\`, loopback, REST \`/api/v1/lrn\` with \`include_enhanced_lrn\`"
	echo "- live: the file replaced by rename every ${SWAP_EVERY} s ($swaps times; $reloads reloads logged),"
	echo "  $posts feeds of $FEED_ROWS updates posted ($failed_posts failed); compactions: $compactions; errors logged: $errors"
	echo
	echo "| run | requests/s | p50 | p99 | non-2xx | socket errors |"
	echo "|---|---:|---:|---:|---:|---:|"
	for r in quiet live; do
		printf '| %s | %.0f | %s | %s | %d | %d |\n' "$r" "$(result "$r" rps)" "$(ms "$(result "$r" p50_us)")" \
			"$(ms "$(result "$r" p99_us)")" "$(result "$r" non2xx)" "$(result "$r" socket_errors)"
	done
	echo
	echo "live / quiet: requests/s $(ratio "$(result live rps)" "$(result quiet rps)"),"
	echo "p50 $(ratio "$(result live p50_us)" "$(result quiet p50_us)"), p99 $(ratio "$(result live p99_us)" "$(result quiet p99_us)")."
	echo "wrk's own \"Non-2xx or 3xx responses\" line: quiet ${quiet_non2xx:-absent (0)}; live ${live_non2xx:-absent (0)}."
} >"$results"
cat "$results"
log "wrote $results"
