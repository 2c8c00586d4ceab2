#!/usr/bin/env bash
# run.sh — the lookup's hot path, counted in instructions.
#
#   benchmarks/instructions/run.sh            # → results/instructions.md
#
# It builds lnpdb and cmd/lnpdb-instr, generates a source directory with
# `lnpdb gen --seed $SEED --ported $PORTED` and builds its table in a
# temporary directory, draws the benchmarks' probe mix (half ported numbers,
# a quarter assigned and not ported, a quarter vacant codes of populated
# NPAs) and checks every query's answer, through every API measured,
# against the source's ported.csv. Then it runs each case under callgrind
# (Debian's valgrind), collecting only inside the case's own measuring
# function (--toggle-collect), so that the setup is not counted and the
# caller's loop and its handling of the answer are, and writes the
# instructions per number with the profile's top functions.
#
# Instruction counts are deterministic: unlike times they are valid on a
# busy, shared machine, and two runs agree to within a fraction of an
# instruction per number. They are not times: a cache miss is one
# instruction here and a hundred nanoseconds in a lookup.
#
# Settings, from the environment:
#   PORTED=1000000   ported numbers
#   SEED=5           lnpdb gen --seed
#   QUERIES=65536    queries each case measures (a power of two)
#   CASES=...        cases measured (lnpdb-instr's names)
#   OUT=results/instructions.md
#   TMPBASE=/tmp KEEP=1 (keep the temporary directory) COMMIT=…
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

defaults PORTED=1000000 SEED=5 QUERIES=65536 OUT="$bench/results/instructions.md" \
	CASES="plain plain-into full full-into many"
need valgrind "Debian: apt-get install -y valgrind"
need callgrind_annotate "Debian: apt-get install -y valgrind"

bench_tmp instructions
build_lnpdb lnpdb-instr
gen_table "$tmp/table.lnpdb" -- --seed "$SEED"

log "drawing $QUERIES queries and checking their answers against ported.csv"
"$tmp/lnpdb-instr" prepare -src "$tmp/src" -table "$tmp/table.lnpdb" -queries "$QUERIES" -out "$tmp/queries" >"$tmp/prepare.log" ||
	die "prepare failed: $(cat "$tmp/prepare.log")"
checked=$(cat "$tmp/prepare.log")
log "$checked"

profiles=()
for c in $CASES; do
	log "callgrind: $c"
	# The Go runtime under valgrind: no collector (GOGC=off: its work would
	# land in whichever case allocates), one P (valgrind does not emulate
	# RDTSCP, which spinning on a lock uses) and no preemption signals
	# (callgrind's signal bookkeeping asserts on some of them).
	GODEBUG=asyncpreemptoff=1 GOGC=off GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out.$c" \
		--collect-atstart=no --toggle-collect=main.measured \
		"$tmp/lnpdb-instr" measure -table "$tmp/table.lnpdb" -in "$tmp/queries" -case "$c" \
		>"$tmp/$c.log" 2>&1 || die "callgrind $c failed: $(tail -20 "$tmp/$c.log")"
	profiles+=("$c=$tmp/callgrind.out.$c")
done

"$tmp/lnpdb-instr" report -n "$QUERIES" -out "$OUT" -title "lnpdb: instructions per number on the hot path" \
	-intro "$(
		cat <<INTRO
Measured by \`benchmarks/instructions/run.sh\` (PORTED=$PORTED SEED=$SEED QUERIES=$QUERIES) at $commit,
$(valgrind --version), $(go version | cut -d' ' -f3-): callgrind counts the instructions
executed inside each case's measuring loop (\`--collect-atstart=no --toggle-collect=main.measured\`; GOGC=off
GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1) over $QUERIES queries of the probe mix, divided by the number of queries. The
answers were checked against ported.csv first: $checked.

Cases: **plain** \`lrn.Lookup(db, number, lrn.Options{})\` in a loop, the returned
Result copied out; **plain-into** \`lrn.LookupInto\` into one Result the loop reuses, as the
front ends do; **full**, **full-into** the same with Enhanced and Messaging; **many**
\`lrn.LookupMany\` plain, 1,024 numbers a call, into a reused slice; **messaging-into**,
**trust-into**, **cnam-into** (not measured unless CASES names them) \`messaging.LookupInto\`,
\`trust.LookupInto\` (at a fixed time) and \`cnam.LookupInto\` into one reused Result. The
figures include the caller's loop.
INTRO
	)" "${profiles[@]}"
log "wrote $OUT"
