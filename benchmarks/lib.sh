# lib.sh — what the benchmark scripts share: logging, the temporary
# directory and the processes to stop, building lnpdb and a generated table,
# the numbers to walk, a PostgreSQL server of its own, waiting for a server, running wrk with http/post.lua
# and reading its RESULT lines, and the figures over rounds.
#
# A script sources it first thing after `set -euo pipefail`:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#
# and gets bench (this directory), repo (the module root), here (the
# script's directory) and the functions below. Settings it reads from the
# environment: TMPBASE=/tmp KEEP=1 (keep the temporary directory) COMMIT=…

bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench")
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
script="$(basename "$here")/$(basename "${BASH_SOURCE[1]}")"

# defaults NAME=VALUE... sets each NAME that the environment leaves unset
# or empty to VALUE: a script's settings.
defaults() {
	local kv k
	for kv in "$@"; do
		k=${kv%%=*}
		[[ -n ${!k:-} ]] || printf -v "$k" '%s' "${kv#*=}"
	done
}

log() { printf '%s %s: %s\n' "$(date +%T)" "$script" "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# need CMD HINT: dies unless CMD is on PATH, naming HINT (where to get it).
need() { command -v "$1" >/dev/null || die "no $1 on PATH${2:+ ($2)}"; }

# bench_tmp NAME makes tmp, $TMPBASE/lnpdb-NAME-XXXXXX. On exit every
# process in pids is stopped, then the commands in at_exit run, then tmp is
# removed (kept with KEEP=1).
bench_tmp() {
	tmp=$(mktemp -d "${TMPBASE:-/tmp}/lnpdb-$1-XXXXXX")
	pids=()
	at_exit=()
	trap bench_cleanup EXIT
}
bench_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for c in "${at_exit[@]}"; do eval "$c" || true; done
	if [[ ${KEEP:-} == 1 ]]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}

# need_postgres sets PG_BIN, the newest PostgreSQL binaries Debian
# installed (unless set), and dies when there are none.
need_postgres() {
	PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
	[[ -x $PG_BIN/pg_ctl ]] || die "no PostgreSQL binaries (Debian: apt-get install -y postgresql), or set PG_BIN"
}

# as_pg CMD... runs CMD, as the postgres user when run as root: PostgreSQL
# refuses to run as root.
as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# start_postgres PORT starts a PostgreSQL server of PG_BIN's (see
# need_postgres) on tmp/pg, listening on 127.0.0.1:PORT, stopped on exit,
# and sets pg_dsn to its superuser's database.
start_postgres() {
	log "starting PostgreSQL on 127.0.0.1:$1"
	mkdir -p "$tmp/pg"
	if [[ $(id -u) == 0 ]]; then
		chmod 711 "$tmp"
		chown postgres: "$tmp/pg"
	fi
	(cd / && as_pg "$PG_BIN/initdb" -D "$tmp/pg/data" -U postgres --auth=trust -E UTF8 --locale=C >"$tmp/initdb.log" 2>&1) ||
		die "initdb failed: $(cat "$tmp/initdb.log")"
	(cd / && as_pg "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w \
		-o "-h 127.0.0.1 -p $1 -k $tmp/pg" start >"$tmp/pg_ctl.log" 2>&1) || die "pg_ctl start failed: $(cat "$tmp/pg_ctl.log")"
	at_exit+=('(cd / && as_pg "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -m fast -w stop >/dev/null 2>&1)')
	pg_dsn="postgres://postgres@127.0.0.1:$1/postgres?sslmode=disable"
}

# build_lnpdb [CMD...] builds lnpdb, and each benchmarks/cmd/CMD, into tmp,
# and sets commit: what the results name as the code measured.
build_lnpdb() {
	log "building lnpdb${*:+ and $*}"
	(cd "$repo" && go build -o "$tmp/lnpdb" ./cmd/lnpdb)
	for c in "$@"; do (cd "$bench" && go build -o "$tmp/$c" "./cmd/$c"); done
	commit=${COMMIT:-$(cd "$repo" && git describe --always --dirty 2>/dev/null || echo unknown)}
}

# gen_table TABLE... [-- GEN_ARGS...] generates $PORTED ported numbers into
# tmp/src with `lnpdb gen GEN_ARGS` and builds each TABLE from them.
gen_table() {
	local tables=()
	while (($#)) && [[ $1 != -- ]]; do
		tables+=("$1")
		shift
	done
	(($#)) && shift
	log "generating and building a table of $PORTED ported numbers"
	"$tmp/lnpdb" gen "$@" --ported "$PORTED" "$tmp/src" >"$tmp/gen.log" 2>&1 || die "gen failed: $(cat "$tmp/gen.log")"
	for t in "${tables[@]}"; do
		"$tmp/lnpdb" build -o "$t" "$tmp/src" >>"$tmp/build.log" 2>&1 || die "build failed: $(cat "$tmp/build.log")"
	done
}

# walk_numbers writes tmp/numbers: about 1000 ported numbers spread over
# the generated source, each with its neighbour (mostly not ported).
walk_numbers() {
	awk -F, -v every=$((PORTED / 1000 > 0 ? PORTED / 1000 : 1)) '
		NR > 1 && (NR - 2) % every == 0 {
			tn = $1; if (length(tn) == 10) tn = "1" tn
			print tn
			if (substr(tn, 11, 1) != "9") print substr(tn, 1, 10) (substr(tn, 11, 1) + 1)
		}' "$tmp/src/ported.csv" >"$tmp/numbers"
}

# await_http WHAT LOG CURL_ARGS... waits up to ten seconds for curl -fs
# CURL_ARGS to succeed, and dies with LOG's content when it does not.
await_http() {
	local what=$1 logfile=$2
	shift 2
	for _ in $(seq 100); do
		curl -fs "$@" >/dev/null 2>&1 && return
		sleep 0.1
	done
	die "$what did not start: $(cat "$logfile")"
}

# serve_each TARGET... starts, for each target, `lnpdb serve --db
# tmp/us.lnpdb ARGS... --addr 127.0.0.1:PORT --log-format json` (logs in
# tmp/serve.TARGET.out and .log), then waits until every one answers. The
# script defines port TARGET (prints PORT) and args_for TARGET (sets the
# array args).
serve_each() {
	local t
	for t in "$@"; do
		args_for "$t"
		"$tmp/lnpdb" serve --db "$tmp/us.lnpdb" "${args[@]}" --addr "127.0.0.1:$(port "$t")" \
			--log-format json >"$tmp/serve.$t.out" 2>"$tmp/serve.$t.log" &
		pids+=($!)
	done
	for t in "$@"; do
		await_http "serve ($t)" "$tmp/serve.$t.log" "http://127.0.0.1:$(port "$t")/api/v1/status"
	done
}

# wrk_post NAME DURATION URL -- POST_ARGS... runs wrk -t$THREADS -c$CONNS
# with http/post.lua and POST_ARGS, keeps its output in tmp/wrk.NAME.out and
# prints its RESULT line's JSON.
wrk_post() {
	local name=$1 duration=$2 url=$3
	shift 4
	wrk -t"$THREADS" -c"$CONNS" -d"$duration" --latency -s "$bench/http/post.lua" "$url" \
		-- "$@" >"$tmp/wrk.$name.out" 2>&1 || die "wrk failed: $(cat "$tmp/wrk.$name.out")"
	grep '^RESULT ' "$tmp/wrk.$name.out" | sed 's/^RESULT //' || die "no result from wrk: $(cat "$tmp/wrk.$name.out")"
}

# rounds TARGET... runs `load TARGET WARMUP` once per target, unrecorded,
# then ROUNDS rounds of `load TARGET DURATION` for every target back to
# back, each result a line "TARGET JSON" of tmp/results. The script defines
# load.
rounds() {
	for t in "$@"; do
		log "warming up $t ($WARMUP)"
		load "$t" "$WARMUP" >/dev/null
	done
	: >"$tmp/results"
	for r in $(seq "$ROUNDS"); do
		for t in "$@"; do
			log "round $r/$ROUNDS: $t ($DURATION)"
			printf '%s %s\n' "$t" "$(load "$t" "$DURATION")" >>"$tmp/results"
			tail -1 "$tmp/results" >&2
		done
	done
}

# values TARGET NAME prints NAME of every round of TARGET, one a line.
values() { grep "^$1 " "$tmp/results" | sed -E "s/.*\"$2\":([0-9.]+).*/\1/"; }
# field TARGET NAME prints the median of NAME over the rounds of TARGET.
field() {
	values "$1" "$2" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# worst TARGET NAME prints the largest NAME over the rounds of TARGET: a
# latency target is met only when every round meets it, not the median
# alone (a median at the line is inside the run-to-run noise).
worst() { values "$1" "$2" | sort -g | tail -1; }
# total TARGET NAME prints the sum of NAME over the rounds of TARGET.
total() { values "$1" "$2" | awk '{ s += $1 } END { print s + 0 }'; }

ms() { awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f %%", 100 * a / b; else print "–" }'; }

# machine WHO prints the sentence that says where and when the results
# were measured, and what shared the cores (WHO).
machine() {
	echo "Written by \`benchmarks/$script\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit;"
	echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), shared by $1"
	echo "and whatever else the machine ran (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))."
}

# round_table N prints the rows of a per-round table (round, target,
# requests/s, p50, p99, max, and the server's CPU per request where the
# results have cpu_us) from tmp/results, N targets a round.
round_table() {
	awk -v n="$1" '{
		t = $1; line = $0
		rps = line; sub(/.*"rps":/, "", rps); sub(/,.*/, "", rps)
		p50 = line; sub(/.*"p50_us":/, "", p50); sub(/,.*/, "", p50)
		p99 = line; sub(/.*"p99_us":/, "", p99); sub(/,.*/, "", p99)
		mx = line; sub(/.*"max_us":/, "", mx); sub(/,.*/, "", mx)
		printf "| %d | %s | %.0f | %.2f ms | %.2f ms | %.2f ms |", int((NR - 1) / n) + 1, t, rps, p50 / 1000, p99 / 1000, mx / 1000
		if (line ~ /"cpu_us":/) { cpu = line; sub(/.*"cpu_us":/, "", cpu); sub(/[,}].*/, "", cpu); printf " %.1f µs |", cpu }
		printf "\n"
	}' "$tmp/results"
}
