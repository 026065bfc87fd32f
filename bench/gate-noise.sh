#!/usr/bin/env bash
# gate-noise.sh: how often `mcpchaos compare` raises a false alarm on a busy runner, and whether
# it catches a real slowdown. A benchmark, not a test: it takes minutes and its figures are
# measurements of the machine it ran on (docs/gate.md, "Measured").
#
#   bench/gate-noise.sh [RUNS] [quiet|loaded]      (default: 8 runs per target, loaded)
#   bench/gate-noise.sh rejudge DIR                 the comparisons again, with this tree's
#                                                   compare, over the runs an earlier one kept
#
# Same build, same server: RUNS runs of seed-incident-fast on each of three targets (the
# built-in one; a URL target `mcpchaos serve`; the same behind a plain external
# toxiproxy-server in front of `serve`; the workload's own faults stay on mcpchaos's embedded
# proxies, as the external server lacks its idle_timeout toxic), then every pair compared
# (RUNS·(RUNS-1)/2 per target) and every run against the 3 before it. Then +5 ms on every reply
# of the server (a Toxiproxy latency toxic in front of `serve`), compared with 3 baselines.
# A false alarm is a same-build compare that exits 99; inconclusive is counted apart.
# Loaded: two CPU hogs and a second clone's `go test -race ./...` in a loop run beside it, all
# stopped by PID at the end. Needs: go, git, toxiproxy-server ($(go env GOPATH)/bin/server).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REJUDGE=""
if [ "${1:-}" = rejudge ]; then
  REJUDGE=1 OUT=$2
  RUNS=$(ls "$OUT/builtin/"*.json | wc -l) MODE="rejudged"
else
  RUNS=${1:-8}
  MODE=${2:-loaded}
  OUT=${OUT:-$(mktemp -d /tmp/gate-noise.XXXXXX)}
fi
TOXI=${TOXIPROXY_SERVER:-$(go env GOPATH)/bin/server}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
say() { echo "$@" | tee -a "$OUT/summary.txt"; }

cd "$OUT" || exit 1
(cd "$ROOT" && go build -o "$OUT/mcpchaos" ./cmd/mcpchaos) || exit 1
M="$OUT/mcpchaos"
say "gate-noise: $RUNS runs per target, $MODE, $(date -u +%FT%TZ), $(nproc) CPUs, in $OUT"

# run TARGET-NAME I ARGS...: one run of seed-incident-fast into TARGET-NAME/I.json
run() {
  local name=$1 i=$2; shift 2
  mkdir -p "$name"
  "$M" run seed-incident-fast -o "$name/$i.json" --progress off -q --formats none "$@" >"$name/$i.log" 2>&1
  echo "$?" >"$name/$i.status"
}

# judge KIND BASES... CURRENT: one compare; prints its class (ok, alarm, inconclusive, other)
judge() {
  local out rc
  out=$("$M" compare --json "${@:2}" 2>/dev/null); rc=$?
  local inc; inc=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("inconclusive",0))' 2>/dev/null || echo 0)
  case $rc in
    0) if [ "$inc" != 0 ]; then echo inconclusive; else echo ok; fi ;;
    99) echo alarm; "$M" compare "${@:2}" >>"$OUT/alarms.txt" 2>&1; echo >>"$OUT/alarms.txt" ;;
    *) echo "other($rc)" ;;
  esac
}

tally() { sort | uniq -c | awk '{printf "%s %s, ", $1, $2}'; }

same_build() {
  local name=$1; shift
  [ -n "$REJUDGE" ] || for i in $(seq 1 "$RUNS"); do run "$name" "$i" "$@"; done
  local bad; bad=$(grep -lv '^0$' "$name"/*.status | wc -l)
  local pair multi
  pair=$(for i in $(seq 1 "$RUNS"); do for j in $(seq $((i+1)) "$RUNS"); do judge pair "$name/$i.json" "$name/$j.json"; done; done | tally)
  multi=$(for j in $(seq 4 "$RUNS"); do judge multi "$name/$((j-3)).json" "$name/$((j-2)).json" "$name/$((j-1)).json" "$name/$j.json"; done | tally)
  local starved; starved=$(grep -l '"starved": true' "$name"/*.json | wc -l)
  say "$name: $RUNS runs ($bad exited non-zero, $starved starved); pairwise: $pair; against the 3 before: $multi"
}

slow_verdicts() {
  local n; n=$(ls slow/*.json | wc -l)
  local v; v=$(for i in $(seq 1 "$n"); do judge slow slow-base/1.json slow-base/2.json slow-base/3.json "slow/$i.json"; done | tally)
  say "+5ms on every reply, 3 baselines: $n compares: $v (alarm = REGRESSED: wanted; ok: missed)"
}

if [ -n "$REJUDGE" ]; then
  for name in builtin serve toxiproxy; do same_build "$name"; done
  slow_verdicts
  exit 0
fi

if [ "$MODE" = loaded ]; then
  yes >/dev/null & PIDS+=($!)
  yes >/dev/null & PIDS+=($!)
  git clone -q "$ROOT" "$OUT/clone"
  (cd "$OUT/clone" && for i in $(seq 1 50); do go test -race -count=1 ./... >"$OUT/clone-test.log" 2>&1; done) & PIDS+=($!)
  sleep 20 # let the suite's builds start
fi

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitup() { for _ in $(seq 1 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "not up: $1"; return 1; }

SERVE_PORT=$(freeport)
"$M" serve --from seed-incident-fast --addr "127.0.0.1:$SERVE_PORT" >"$OUT/serve.log" 2>&1 & PIDS+=($!)
waitup "http://127.0.0.1:$SERVE_PORT/healthz" || exit 1
API_PORT=$(freeport); FRONT_PORT=$(freeport)
"$TOXI" -host 127.0.0.1 -port "$API_PORT" >"$OUT/toxiproxy.log" 2>&1 & PIDS+=($!)
waitup "http://127.0.0.1:$API_PORT/version" || exit 1
API="http://127.0.0.1:$API_PORT"
curl -fsS -X POST "$API/proxies" -d "{\"name\":\"front\",\"listen\":\"127.0.0.1:$FRONT_PORT\",\"upstream\":\"127.0.0.1:$SERVE_PORT\"}" >/dev/null || exit 1

same_build builtin
same_build serve --target "http://127.0.0.1:$SERVE_PORT/mcp" --session-ttl 3s
same_build toxiproxy --target "http://127.0.0.1:$FRONT_PORT/mcp" --session-ttl 3s

# +5 ms on every reply: 3 baselines through the plain proxy, then the latency toxic on it.
for i in 1 2 3; do run slow-base "$i" --target "http://127.0.0.1:$FRONT_PORT/mcp" --session-ttl 3s; done
curl -fsS -X POST "$API/proxies/front/toxics" -d '{"name":"plus5ms","type":"latency","stream":"downstream","attributes":{"latency":5}}' >/dev/null || exit 1
SLOW=$(( RUNS < 10 ? RUNS : 10 ))
for i in $(seq 1 "$SLOW"); do run slow "$i" --target "http://127.0.0.1:$FRONT_PORT/mcp" --session-ttl 3s; done
slow_verdicts
say "alarms, in full: $OUT/alarms.txt"
