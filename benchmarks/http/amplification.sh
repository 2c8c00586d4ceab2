#!/usr/bin/env bash
# amplification.sh — the server's memory under GraphQL documents built to
# fail validation many times over.
#
#   benchmarks/http/amplification.sh      # prints a Markdown table
#
# Starts `lnpdb serve` on the sample table and builds two 15 KB documents:
# "conflicts", hundreds of lookupLrn fields under one response name with
# differing arguments (each pair a conflict) and an unknown field each, and
# "errors", hundreds of aliased lookupLrn fields each wrong twice (a number
# for the phone number, an unknown field). It sends each COPIES times at once
# (curl, one connection each), all with one key (bounded by the per-key
# concurrency) and each with a key of its own, and reports the answers, the
# largest response, and the server's resident memory before (VmRSS) and its
# peak (VmHWM) after each run.
#
# Settings: COPIES=200 PORT=18095 TMPBASE=/tmp
set -euo pipefail
COPIES=${COPIES:-200}
PORT=${PORT:-18095}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$(dirname "$here")")
tmp=$(mktemp -d "${TMPBASE:-/tmp}/lnpdb-amp-XXXXXX")
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
log() { printf '%s amplification.sh: %s\n' "$(date +%T)" "$*" >&2; }

(cd "$repo" && go build -o "$tmp/lnpdb" ./cmd/lnpdb)
for i in $(seq "$COPIES"); do "$tmp/lnpdb" key new --keys "$tmp/keys" --rpm 1000000 2>/dev/null >>"$tmp/keylist"; done
"$tmp/lnpdb" build -o "$tmp/sample.lnpdb" "$repo/testdata/sample" >/dev/null 2>&1
"$tmp/lnpdb" serve --db "$tmp/sample.lnpdb" --keys "$tmp/keys" --addr "127.0.0.1:$PORT" --access-log=false >"$tmp/serve.out" 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/api/v1/status" >/dev/null 2>&1 && break; sleep 0.1; done

python3 - "$tmp" <<'PY'
import json, sys
for name, field in (("conflicts", ' a: lookupLrn(phoneNumber: "{i}") {{ lrn x{i} }}'), ("errors", ' a{i}: lookupLrn(phoneNumber: {i}) {{ lrn x }}')):
    q, i = "{", 0
    while True:
        p = field.format(i=i)
        if len(q) + len(p) > 15000: break
        q += p; i += 1
    q += "}"
    json.dump({"query": q}, open(f"{sys.argv[1]}/{name}.json", "w"))
PY

rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
fire() { # fire DOC KEYS_FILE: COPIES requests at once, keys from the file in turn
	awk -v n="$COPIES" '{ k[NR] = $1 } END { for (i = 0; i < n; i++) print k[i % NR + 1] }' "$2" |
		xargs -P "$COPIES" -I{} curl -s -o /dev/null -w '%{http_code} %{size_download}\n' \
			-H 'Authorization: Bearer {}' -H 'Content-Type: application/json' \
			--data-binary "@$1" "http://127.0.0.1:$PORT/graphql" >"$tmp/codes" || true
}
echo "| document | run | answers | largest response | RSS before | peak RSS after |"
echo "|---|---|---|---:|---:|---:|"
head -1 "$tmp/keylist" >"$tmp/onekey"
for doc in conflicts errors; do
	for run in onekey keylist; do
		before=$(rss VmRSS)
		start=$(date +%s.%N)
		fire "$tmp/$doc.json" "$tmp/$run"
		secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
		codes=$(cut -d' ' -f1 "$tmp/codes" | sort | uniq -c | awk '{ printf "%s%s×%s", sep, $1, $2; sep = ", " }')
		largest=$(cut -d' ' -f2 "$tmp/codes" | sort -n | tail -1)
		name=$([[ $run == onekey ]] && echo "$COPIES at once, one key" || echo "$COPIES at once, a key each")
		printf '| %s (%s B) | %s (%s s) | %s | %s B | %s MB | %s MB |\n' "$doc" "$(wc -c <"$tmp/$doc.json")" "$name" "$secs" "$codes" "$largest" \
			"$(awk -v k="$before" 'BEGIN { printf "%.0f", k / 1024 }')" "$(awk -v k="$(rss VmHWM)" 'BEGIN { printf "%.0f", k / 1024 }')"
	done
done
