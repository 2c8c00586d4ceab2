#!/usr/bin/env bash
# run.sh — the softswitch front ends under load, beside in-process
# lrn.Lookup, in one run.
#
#   benchmarks/dip/run.sh            # → benchmarks/results/dip.md
#
# It builds lnpdb and cmd/dipload, generates a table with `lnpdb gen` and
# `lnpdb build` in a temporary directory, writes one query sequence (the
# side-by-side benchmarks' mix: half ported numbers, a quarter unported
# numbers in assigned codes, a quarter numbers in vacant codes, shuffled) as
# a SIPp injection file and a dnsperf file, starts `lnpdb serve --sip --dns
# --pdb` (no access log), and measures, in ROUNDS interleaved rounds:
#
#   lookup    in-process lrn.Lookup on the same queries (dipload lookup),
#             one goroutine and all cores: the reference of this run
#   pdb       dipload pdb: version 1 queries from CLIENTS sockets, WINDOW
#             outstanding each, DURATION seconds; once with the client's
#             bursts sent segmented (UDP_SEGMENT), once a message per query
#   enum      dnsperf: NAPTR queries, DNSPERF_CLIENTS clients, 200
#             outstanding, DURATION seconds
#
# then once:
#
#   sip       SIPp (testdata/softswitch/sipp/redirect.xml): INVITE, 302 or
#             404, ACK, at each rate of RATES calls per second for DURATION
#             seconds, split over SIPP_PROCS SIPp processes; dips/s achieved,
#             failed calls, p50/p99 response time (SIPp measures it in whole
#             milliseconds)
#   kamailio  one Kamailio (testdata/softswitch/kamailio.cfg) with the pdb
#             module's default 50 ms timeout dipping lnpdb for every INVITE
#             SIPp sends it (X-Dip: pdb) at KAM_RATE calls per second; its
#             own "got an answer in" times
#
# Everything shares the machine's cores with the load generators. Each run
# is short (DURATION seconds); the machine is shared. So besides rates it
# records, for every figure, the load average and the CPU time (user +
# system) the server and the load generator spent per answer (the server's
# from /proc/PID/stat, the generator's from /usr/bin/time), which move much
# less with the machine's load than rates do.
#
# Settings, from the environment:
#   PORTED=1000000  DURATION=8  ROUNDS=3  RATES="1000 2500 5000 10000 15000 20000"
#   CLIENTS=2 WINDOW=64  DNSPERF_CLIENTS=4  KAM_RATE=2000  SIPP_PROCS=2
#   NICE=-15 (server and load generators at that nice value; needs root)
#   TMPBASE=/tmp KEEP=1 (keep the temporary directory)
#   RESULTS=FILE  (default: ../results/dip.md)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=1000000 DURATION=8 ROUNDS=3 RATES="1000 2500 5000 10000 15000 20000" \
	CLIENTS=2 WINDOW=64 DNSPERF_CLIENTS=4 KAM_RATE=2000 SIPP_PROCS=2
# NICE: run the server and every load generator at this nice value, to see
# what the front ends do when other work on the machine does not delay them.
pri=()
[[ -n ${NICE:-} ]] && pri=(nice -n "$NICE")
SIP_PORT=25070 DNS_PORT=25353 PDB_PORT=25574 KAM_PORT=25060 SIPP_PORT=25091

results=${RESULTS:-$bench/results/dip.md}
sw=$repo/testdata/softswitch

for b in go sipp dnsperf; do need $b "Debian: sip-tester for sipp, dnsperf"; done

need /usr/bin/time "Debian: time"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
bench_tmp dip
build_lnpdb dipload
gen_table "$tmp/us.lnpdb" -- --seed 1
mix=$("$tmp/dipload" queries -src "$tmp/src" -out "$tmp")

"${pri[@]}" "$tmp/lnpdb" serve --db "$tmp/us.lnpdb" --dev-key --access-log=false --watch 0 --addr 127.0.0.1:0 \
	--sip 127.0.0.1:$SIP_PORT --dns 127.0.0.1:$DNS_PORT --pdb 127.0.0.1:$PDB_PORT >"$tmp/serve.log" 2>&1 &
pids+=($!)
serve_pid=$!
# cpu_ms: CPU time (user + system) lnpdb serve has used, in milliseconds.
# Per dip, it tells what a dip costs the server whatever else the shared
# machine runs.
tick=$(getconf CLK_TCK)
cpu_ms() { awk -v t="$tick" '{ print ($14 + $15) * 1000 / t }' "/proc/$serve_pid/stat"; }
for _ in $(seq 100); do grep -q "serving SIP redirects" "$tmp/serve.log" && break; sleep 0.1; done
grep -q "serving SIP redirects" "$tmp/serve.log" || die "serve did not start: $(cat "$tmp/serve.log")"

# pct FORMAT: the 50th and 99th percentiles of sorted numbers on stdin.
pct() {
	awk -v f="$1" 'function at(p,  i) { i = int(NR * p); if (i < 1) i = 1; return v[i] }
		{ v[NR] = $1 } END { if (NR) printf f, at(.5), at(.99); else printf "- -" }'
}
# median: the median of the numbers on stdin.
median() { sort -g | awk 'NF { v[++n] = $1 } END { if (n) print v[int((n + 1) / 2)]; else print "-" }'; }
field() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'; }
# per_dip MS0 MS1 COUNT: CPU µs per dip from milliseconds used.
per_dip() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf("%.2f", (b - a) * 1000 / n); else printf("-") }'; }
# timed FILE CMD...: runs CMD, writing its user + system CPU seconds to FILE.
timed() { local f=$1; shift; /usr/bin/time -o "$f" -f "%U %S" "$@"; }
# client_us FILE COUNT: a load generator's CPU µs per answer from timed's FILE.
client_us() { awk -v n="$2" '{ if (n > 0) printf("%.2f", ($1 + $2) * 1e6 / n); else printf("-") }' "$1"; }
# budget SERVER_US CLIENT_US: answers per second the two cores could carry
# if server and load generator had them to themselves.
budget() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b > 0) printf("%.0f", 2e6 / (a + b)); else printf("-") }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# The rounds interleave the reference, pdb (segmented and plain client
# sends) and ENUM, so that each figure is set beside the others under the
# same machine load; the tables give every round and the median.
pdbrows="" enumrows="" lookups1="" lookupsN="" pdbq="" pdbplainq="" dnsq=""
pdbs_cpu="" pdbc_cpu="" dnss_cpu="" dnsc_cpu=""
for round in $(seq "$ROUNDS"); do
	log "round $round: in-process lrn.Lookup"
	lookup=$("${pri[@]}" "$tmp/dipload" lookup -db "$tmp/us.lnpdb" -src "$tmp/src" -d 2s)
	lookups1+="$(awk '/goroutines=1 /{sub("qps=","",$3); print $3}' <<<"$lookup")"$'\n'
	lookupsN+="$(awk '!/goroutines=1 /{sub("qps=","",$3); print $3}' <<<"$lookup")"$'\n'

	for mode in segmented plain; do
		log "round $round: pdb load ($mode client sends)"
		seg=true; [[ $mode == plain ]] && seg=false
		l=$(load1); c0=$(cpu_ms)
		pdbout=$(timed "$tmp/pdb.time" "${pri[@]}" "$tmp/dipload" pdb -addr 127.0.0.1:$PDB_PORT -src "$tmp/src" -d "${DURATION}s" \
			-clients "$CLIENTS" -window "$WINDOW" -segment=$seg)
		n=$(field "$pdbout" answered)
		s_us=$(per_dip "$c0" "$(cpu_ms)" "$n"); c_us=$(client_us "$tmp/pdb.time" "$n")
		q=$(field "$pdbout" qps)
		if [[ $mode == segmented ]]; then pdbq+="$q"$'\n'; pdbs_cpu+="$s_us"$'\n'; pdbc_cpu+="$c_us"$'\n'; else pdbplainq+="$q"$'\n'; fi
		pdbrows+="| $round | $l | $mode | $q | $(field "$pdbout" p50_us) µs | $(field "$pdbout" p99_us) µs | $(field "$pdbout" lost) | $s_us µs | $c_us µs | $(budget "$s_us" "$c_us") |"$'\n'
	done

	log "round $round: ENUM load (dnsperf)"
	l=$(load1); c0=$(cpu_ms)
	timed "$tmp/dnsperf.time" "${pri[@]}" dnsperf -s 127.0.0.1 -p $DNS_PORT -d "$tmp/dnsperf.txt" -l "$DURATION" -c "$DNSPERF_CLIENTS" -q 200 >"$tmp/dnsperf.out" 2>&1 || true
	dns_qps=$(awk '/Queries per second/ {print $4}' "$tmp/dnsperf.out")
	dns_avg=$(awk '/Average Latency/ {print $4}' "$tmp/dnsperf.out")
	dns_max=$(awk '/Average Latency/ {gsub(/[(),]/,""); print $8}' "$tmp/dnsperf.out")
	dns_sd=$(awk '/Latency StdDev/ {print $4}' "$tmp/dnsperf.out")
	dns_lost=$(awk '/Queries lost/ {print $3}' "$tmp/dnsperf.out")
	dns_nx=$(grep -o 'NXDOMAIN [0-9]*' "$tmp/dnsperf.out" | awk '{print $2}')
	dns_done=$(awk '/Queries completed/ {print $3}' "$tmp/dnsperf.out")
	s_us=$(per_dip "$c0" "$(cpu_ms)" "$dns_done"); c_us=$(client_us "$tmp/dnsperf.time" "$dns_done")
	dnsq+="$dns_qps"$'\n'; dnss_cpu+="$s_us"$'\n'; dnsc_cpu+="$c_us"$'\n'
	enumrows+="| $round | $l | $(printf '%.0f' "$dns_qps") | $dns_avg | $dns_sd | $dns_max | $dns_lost | $dns_nx | $s_us µs | $c_us µs | $(budget "$s_us" "$c_us") |"$'\n'
done
lookup1=$(median <<<"$lookups1"); lookupN=$(median <<<"$lookupsN")
pdb_med=$(median <<<"$pdbq"); pdbplain_med=$(median <<<"$pdbplainq"); dns_med=$(median <<<"$dnsq")
pdbs_med=$(median <<<"$pdbs_cpu"); pdbc_med=$(median <<<"$pdbc_cpu"); dnss_med=$(median <<<"$dnss_cpu"); dnsc_med=$(median <<<"$dnsc_cpu")

log "SIP load (SIPp) at $RATES calls/s"
siprows=""
sip_best=0
k=0
for rate in $RATES; do
	# A rate given twice is measured twice: rounds at that rate.
	k=$((k + 1)); d="$tmp/sipp-$k-$rate"; mkdir -p "$d"
	l=$(load1); c0=$(cpu_ms)
	# SIPP_PROCS callers share the rate: one SIPp process is single-threaded
	# and tops out below what the server answers.
	spids=()
	for i in $(seq "$SIPP_PROCS"); do
		mkdir -p "$d/$i"
		(cd "$d/$i" && timed time.txt "${pri[@]}" timeout $((DURATION + 15)) sipp 127.0.0.1:$SIP_PORT -sf "$sw/sipp/redirect.xml" -inf "$tmp/sipp.csv" \
			-r $((rate / SIPP_PROCS)) -m $((rate / SIPP_PROCS * DURATION)) -i 127.0.0.1 -p $((SIPP_PORT + i)) -buff_size 4194304 \
			-trace_rtt -rtt_freq 1 -trace_stat -fd 1 -timeout $((DURATION + 10))s >"$d/$i/screen.txt" 2>&1) &
		spids+=($!)
	done
	wait "${spids[@]}" || true
	ok=0 failed=0 retrans=0 dips=0 sipp_s=0
	for i in $(seq "$SIPP_PROCS"); do
		stat=$(ls "$d/$i"/redirect_*_.csv 2>/dev/null | head -1)
		rtt=$(ls "$d/$i"/redirect_*_rtt.csv 2>/dev/null | head -1)
		[[ -n $stat && -n $rtt ]] || { log "sipp $i at $rate left no statistics"; continue; }
		# The last statistics row: successful and failed calls.
		row=$(awk -F';' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i } END { print $col["SuccessfulCall(C)"] ";" $col["FailedCall(C)"] }' "$stat")
		ok=$((ok + $(cut -d';' -f1 <<<"$row"))); failed=$((failed + $(cut -d';' -f2 <<<"$row")))
		retrans=$((retrans + $(awk '/INVITE ---------->/ { r = $5 } END { print r + 0 }' "$d/$i/screen.txt")))
		# Dips per second from the response times' own clock (ms since start).
		dips=$((dips + $(awk -F';' 'NR == 2 { first = $1 } NR > 1 { last = $1; n++ } END { printf("%.0f", (last > first ? n * 1000 / (last - first) : 0)) }' "$rtt")))
		awk -F';' 'NR > 1 { print $2 }' "$rtt" >>"$d/rtt-all"
		sipp_s=$(awk -v a="$sipp_s" '{ print a + $1 + $2 }' "$d/$i/time.txt")
	done
	sip_cpu=$(per_dip "$c0" "$(cpu_ms)" "$ok")
	sipp_cpu=$(awk -v s="$sipp_s" -v n="$ok" 'BEGIN { if (n > 0) printf("%.1f", s * 1e6 / n); else printf("-") }')
	pcts=$(sort -n "$d/rtt-all" 2>/dev/null | pct "%s %s")
	# The best rate that holds: nearly all asked calls done, p99 within 5 ms.
	if [[ ${pcts#* } != - ]] && awk -v d="$dips" -v r="$rate" -v p="${pcts#* }" 'BEGIN { exit !(d >= 0.98 * r && p <= 5) }'; then
		sip_best=$dips
	fi
	siprows+="| $rate | $l | $dips | $ok | $failed | $retrans | ${pcts% *} | ${pcts#* } | $sip_cpu | $sipp_cpu | $(budget "$sip_cpu" "$sipp_cpu") |"$'\n'
	log "sip rate $rate: $dips dips/s, $failed failed, $retrans INVITEs resent, p50/p99 ${pcts% *}/${pcts#* } ms, $sip_cpu µs server and $sipp_cpu µs SIPp CPU per dip"
done

kamrow="not run (no kamailio on PATH)"
if command -v kamailio >/dev/null; then
	log "Kamailio with pdb_query at $KAM_RATE calls/s"
	awk 'NR == 1 { print; next } { print $0 ";pdb" }' "$tmp/sipp.csv" >"$tmp/kam.csv"
	mkdir -p "$tmp/kam"
	"${pri[@]}" kamailio -f "$sw/kamailio.cfg" -DD -E -Y "$tmp/kam" -P "$tmp/kam/pid" -m 64 -M 8 \
		-A LISTEN=udp:127.0.0.1:$KAM_PORT -A "PDB_SERVER=\"127.0.0.1:$PDB_PORT\"" >"$tmp/kam.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do grep -q "SO_RCVBUF is finally" "$tmp/kam.log" && break; sleep 0.1; done
	d="$tmp/sipp-kam"; mkdir -p "$d"
	(cd "$d" && "${pri[@]}" timeout $((DURATION + 15)) sipp 127.0.0.1:$KAM_PORT -sf "$sw/sipp/dip.xml" -inf "$tmp/kam.csv" \
		-r "$KAM_RATE" -m $((KAM_RATE * DURATION)) -i 127.0.0.1 -p $SIPP_PORT -buff_size 4194304 -trace_stat -fd 1 \
		-timeout $((DURATION + 10))s >"$d/screen.txt" 2>&1) || true
	stat=$(ls "$d"/dip_*_.csv 2>/dev/null | head -1)
	row=$(awk -F';' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i } END { print $col["ElapsedTime(C)"] ";" $col["SuccessfulCall(C)"] ";" $col["FailedCall(C)"] }' "$stat")
	elapsed=$(cut -d';' -f1 <<<"$row"); ok=$(cut -d';' -f2 <<<"$row"); failed=$(cut -d';' -f3 <<<"$row")
	secs=$(awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }' <<<"$elapsed")
	answers=$(grep -c "got an answer in" "$tmp/kam.log" || true)
	timeouts=$(grep -c "exceeded timeout" "$tmp/kam.log" || true)
	kpcts=$(grep -o "got an answer in [0-9.]*" "$tmp/kam.log" | awk '{ print $5 }' | sort -n | pct "%.3f %.3f")
	kdips=$(awk -v ok="$ok" -v s="$secs" 'BEGIN { printf("%.0f", (s > 0 ? ok / s : 0)) }')
	kamrow="| $KAM_RATE | $kdips | $ok | $failed | $answers | $timeouts | ${kpcts% *} | ${kpcts#* } |"
fi

host=$(uname -srm); cpus=$(nproc); load=$(cut -d' ' -f1-3 /proc/loadavg)
pct_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f %%", 100 * a / b; else printf "-" }'; }
met() { awk -v q="$1" -v t="$2" 'BEGIN { print (q >= t ? "yes" : "no") }'; }
cat >"$results" <<MD
# Softswitch front ends under load

\`benchmarks/dip/run.sh\` at \`$commit\`, $(date -u +%Y-%m-%dT%H:%MZ), $host, $cpus cores (load
average at the start: $load_start; at the end: $load; the machine is shared). Table: \`lnpdb gen --seed 1 --ported $PORTED\`.
Queries: $mix. Servers and load generators share the cores$([[ -n ${NICE:-} ]] && echo ", and run at nice $NICE (\`NICE=$NICE\`), ahead of the machine's other work"). Settings: ROUNDS=$ROUNDS DURATION=$DURATION RATES="$RATES" SIPP_PROCS=$SIPP_PROCS.

Each figure is given with the machine's one-minute load average when it was taken. Throughput
moves with that load; CPU per answer moves much less, so each table also gives the CPU time
(user + system) the server and the load generator spent per answer, and what their sum allows:
**2-core budget** = 2 s of CPU per second ÷ (server + generator CPU per answer), the answers per
second the two cores would carry with nothing else running. $ROUNDS interleaved rounds of
the reference, pdb and ENUM; medians below each table.

In-process \`lrn.Lookup\` on the same queries, median of the rounds: **$lookup1/s** on one goroutine,
**$lookupN/s** on all cores.

## pdb (Kamailio's protocol, UDP)

\`dipload pdb\`, $CLIENTS sockets × $WINDOW queries outstanding, ${DURATION} s. *segmented*: the
client sends each burst of queries as one \`UDP_SEGMENT\` message (the server still receives one
datagram per query); *plain*: one message per query, as Kamailio sends. The server answers
equal-sized answers to one peer in one segmented send either way.

| round | load | client sends | answers/s | p50 | p99 | lost | server CPU per answer | client CPU per answer | 2-core budget |
|---|---|---|---|---|---|---|---|---|---|
${pdbrows}
Median: segmented $pdb_med answers/s, plain $pdbplain_med answers/s ($(pct_of "$pdb_med" "$lookupN") and $(pct_of "$pdbplain_med" "$lookupN") of in-process lookup on all cores); server $pdbs_med µs + client $pdbc_med µs CPU per answer (segmented).

One Kamailio (pdb module, default 50 ms timeout) dipping lnpdb for each INVITE from SIPp:

| calls/s asked | calls/s done | calls | failed | pdb answers | pdb timeouts | answer time p50 (ms) | p99 (ms) |
|---|---|---|---|---|---|---|---|
$kamrow

## ENUM (NAPTR over UDP)

\`dnsperf -c $DNSPERF_CLIENTS -q 200 -l $DURATION\`:

| round | load | queries/s | avg latency (s) | stddev (s) | max (s) | lost | NXDOMAIN | server CPU per query | dnsperf CPU per query | 2-core budget |
|---|---|---|---|---|---|---|---|---|---|---|
${enumrows}
Median: $(printf '%.0f' "$dns_med") queries/s ($(pct_of "$dns_med" "$lookupN") of in-process lookup on all cores); server $dnss_med µs + dnsperf $dnsc_med µs CPU per query.

## SIP redirect (302)

SIPp \`testdata/softswitch/sipp/redirect.xml\` (INVITE → 302 or 404 → ACK), ${DURATION} s per rate, the rate
split over $SIPP_PROCS SIPp processes (one SIPp tops out near 2,700 calls/s here);
response time from INVITE to final response, in SIPp's whole milliseconds. SIPp resends an
INVITE unanswered after 500 ms; resent INVITEs are answered again (and counted in the CPU).
A dip is three datagrams (INVITE, 302 or 404, ACK); CPU per dip is per successful call:

| calls/s asked | load | dips/s done | calls | failed | INVITEs resent | p50 (ms) | p99 (ms) | server CPU per dip (µs) | SIPp CPU per dip (µs) | 2-core budget |
|---|---|---|---|---|---|---|---|---|---|---|
$siprows
## Targets

| front end | target | this run (median) | met |
|---|---|---|---|
| ENUM | ≥ 100,000 queries/s | $(printf '%.0f' "$dns_med") | $(met "$dns_med" 100000) |
| pdb | ≥ 200,000 queries/s | $pdb_med (plain client sends: $pdbplain_med) | $(met "$pdb_med" 200000) (plain: $(met "$pdbplain_med" 200000)) |
| SIP | ≥ 10,000 dips/s with p99 ≤ 5 ms | best rate holding p99 ≤ 5 ms: $sip_best dips/s | $(met "$sip_best" 10000) |
MD
log "wrote $results"
cat "$results"
