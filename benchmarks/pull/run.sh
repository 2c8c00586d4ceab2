#!/usr/bin/env bash
# run.sh — how long a table takes to reach a node: lnpdb pull from an origin
# on loopback (plain, zstd compressed on the fly, a static .zst file, and the
# 304 of an unchanged table), and the swap of `serve --db-url`: from the
# node's start, serving an older table, until it answers from the origin's.
#
#   benchmarks/pull/run.sh NEW.lnpdb OLD.lnpdb   # → benchmarks/pull/results.md
#
# NEW is the table the origin serves (copied, never modified); OLD the one
# the node starts with. The .zst file is made once with the zstd CLI (-3).
# Settings, from the environment: TMPBASE=/tmp (where the copies go),
# KEEP=1 keeps them.
set -euo pipefail
new=$(realpath "$1"); old=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPBASE:-/tmp}/lnpdb-pull-XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
go build -C "$root" -o "$work/lnpdb" ./cmd/lnpdb
command -v zstd >/dev/null || { echo "zstd not found (Debian package zstd)" >&2; exit 1; }

cp "$new" origin.lnpdb
zstd -q -3 -T1 origin.lnpdb -o origin.lnpdb.zst
./lnpdb key new --keys keys.txt | head -1 > api.key
./lnpdb key new --keys admins.txt | head -1 > admin.key

now() { date +%s.%N; }
secs() { printf '%.2f' "$(echo "$2 - $1" | bc)"; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
await() { # await FILE PATTERN
	for _ in $(seq 1 6000); do grep -q "$2" "$1" && return 0; sleep 0.05; done
	echo "timed out waiting for $2 in $1" >&2; cat "$1" >&2; exit 1
}

oport=$(port)
./lnpdb serve --db origin.lnpdb --keys keys.txt --admin-keys admins.txt --addr 127.0.0.1:$oport \
	--access-log=false --log-format json --compact-at 0 >/dev/null 2>origin.log &
pids+=($!)
await origin.log '"msg":"serving"'
sport=$(port)
python3 -m http.server --bind 127.0.0.1 "$sport" >/dev/null 2>&1 &
pids+=($!)
sleep 1
url="http://127.0.0.1:$oport/admin/v1/table"

pull() { # pull LABEL URL [--key-file F]: one run, timed
	local label=$1; shift
	local t0 t1
	sync; t0=$(now)
	./lnpdb pull "$@" > pull.out
	t1=$(now)
	printf '| %s | %s | %s |\n' "$label" "$(secs "$t0" "$t1")" "$(cat pull.out)"
}
rows=()
# References, same run: a local copy with fsync (no network, no verify), and
# a full verify of the file.
sync; t0=$(now); cp origin.lnpdb ref.lnpdb && sync ref.lnpdb; t1=$(now)
rows+=("$(printf '| reference: cp + fsync of the file | %s | |' "$(secs "$t0" "$t1")")")
rm -f ref.lnpdb
t0=$(now); ./lnpdb verify origin.lnpdb >/dev/null; t1=$(now)
rows+=("$(printf '| reference: lnpdb verify of the file | %s | |' "$(secs "$t0" "$t1")")")
rows+=("$(pull 'lnpdb origin, plain' --key-file admin.key "$url" plain.lnpdb)")
rows+=("$(pull 'lnpdb origin, unchanged (304)' --key-file admin.key "$url" plain.lnpdb)")
rows+=("$(pull 'lnpdb origin, ?zstd=1 (on the fly)' --key-file admin.key "$url?zstd=1" zst.lnpdb)")
rows+=("$(pull 'static us.lnpdb.zst (python3 http.server)' "http://127.0.0.1:$sport/origin.lnpdb.zst" static.lnpdb)")
cmp -s plain.lnpdb origin.lnpdb && cmp -s zst.lnpdb origin.lnpdb && cmp -s static.lnpdb origin.lnpdb
rm -f plain.lnpdb zst.lnpdb static.lnpdb

# The swap: a node serving OLD, with --db-url, until its status shows NEW.
cp "$old" node.lnpdb
size=$(stat -c %s origin.lnpdb)
nport=$(port)
sync; t0=$(now)
./lnpdb serve --db node.lnpdb --keys keys.txt --addr 127.0.0.1:$nport --access-log=false --log-format json \
	--compact-at 0 --db-url "$url" --db-url-key-file admin.key --db-url-every 1h >/dev/null 2>node.log &
pids+=($!)
await node.log '"msg":"serving"'
t1=$(now)
for _ in $(seq 1 12000); do
	curl -sf "http://127.0.0.1:$nport/api/v1/status" | grep -q "\"size\":$size" && break
	sleep 0.05
done
t2=$(now)
curl -sf "http://127.0.0.1:$nport/api/v1/lrn" -H "Authorization: Bearer $(cat api.key)" \
	-H 'Content-Type: application/json' -d '{"phone_number":"12025550123"}' >/dev/null
fetched=$(grep -o '"msg":"table fetched and installed".*' node.log | grep -o '"duration":[0-9]*' | cut -d: -f2)
reloaded=$(grep -o '"msg":"table reloaded".*' node.log | grep -o '"duration":[0-9]*' | cut -d: -f2)

{
	echo "# A table reaching a node"
	echo
	echo "Written by \`benchmarks/pull/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD);"
	echo "$(nproc) cores, shared with whatever else the machine ran (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Loopback; the page cache held the files. Every pull writes, fsyncs and verifies the whole table before the rename."
	echo
	echo "- table: $(basename "$new"), $size bytes; $(basename "$old") for the node's start"
	echo "- us.lnpdb.zst: \`zstd -3\`, $(stat -c %s origin.lnpdb.zst) bytes"
	echo
	echo "| pull | seconds | lnpdb pull says |"
	echo "|---|---:|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "\`serve --db-url\` swap, node starting with $(basename "$old") (its first poll starts as it opens it):"
	echo "start → answering from the new table $(secs "$t0" "$t2") s, of which start → serving the old one $(secs "$t0" "$t1") s"
	echo "(fetch, fsync and verify: $(printf '%.2f' "$(echo "$fetched / 1000000000" | bc -l)") s; reload, verifying again: $(printf '%.2f' "$(echo "$reloaded / 1000000000" | bc -l)") s)."
} | tee "$here/results.md"
