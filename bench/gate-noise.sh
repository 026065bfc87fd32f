#!/usr/bin/env bash
# gate-noise.sh: how often `mcpchaos compare` raises a false alarm on a busy runner, whether it
# catches a real slowdown, and whether it says session regressions in words. A benchmark, not a
# test: it takes minutes and its figures are measurements of the machine it ran on
# (docs/gate.md, "Measured").
#
#   bench/gate-noise.sh [RUNS] [quiet|loaded]      (default: 8 runs per target, loaded)
#   bench/gate-noise.sh rejudge DIR                 the comparisons again, with this tree's (or
#                                                   BUILD's) compare, over the runs DIR kept
#
# Environment:
#   BUILD=COMMIT   build mcpchaos from that commit (a fresh clone) instead of this tree: to check
#                  that the load reproduces the false alarms of a build before the gate work
#   PARTS="..."    which parts to run, of: builtin serve toxiproxy slow sessions (default: all)
#   OUT=DIR        where to keep everything (default: a new /tmp/gate-noise.XXXXXX)
#
# Same build, same server: RUNS runs of seed-incident-fast on each of three targets (the
# built-in one; a URL target `mcpchaos serve`; the same behind a plain external
# toxiproxy-server in front of `serve`; the workload's own faults stay on mcpchaos's embedded
# proxies, as the external server lacks its idle_timeout toxic), then every pair compared
# (RUNS·(RUNS-1)/2 per target) and every run against the 3 before it. A false alarm is a
# same-build compare that exits 99; inconclusive (a starved run's timing rows) is counted apart.
# Then +5 ms on every reply of the server (a Toxiproxy latency toxic in front of `serve`),
# compared with 3 baselines: REGRESSED is wanted, ok is a miss. Then three session regressions,
# each 3 runs against 3 baselines, which must exit 99 with a "what changed:" line in words:
# the server's GET strict → permissive, dead session ids answered 200 (a server that no longer
# expires its sessions, against the declared 3 s TTL), and the probe group's policy turned off
# (a workload change: compared with --force).
#
# Loaded: two CPU hogs and a second fresh clone's `go test -race ./...` in a loop run beside it
# (the loop in a process group of its own), all ended by PID (the loop by its group) at the end,
# as every server this script starts. Needs: go, git, curl, python3, toxiproxy-server
# ($(go env GOPATH)/bin/server).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REJUDGE=""
if [ "${1:-}" = rejudge ]; then
  REJUDGE=1 OUT=$2
  RUNS=$(ls "$OUT/builtin/"*.json 2>/dev/null | wc -l) MODE="rejudged"
else
  RUNS=${1:-8}
  MODE=${2:-loaded}
  OUT=${OUT:-$(mktemp -d /tmp/gate-noise.XXXXXX)}
fi
PARTS=${PARTS:-builtin serve toxiproxy slow sessions}
TOXI=${TOXIPROXY_SERVER:-$(go env GOPATH)/bin/server}
PIDS=()   # processes to end by PID
GROUPS_=() # process groups to end by their leader's PID
cleanup() {
  for g in "${GROUPS_[@]}"; do kill -- "-$g" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT" && cd "$OUT" || exit 1
say() { echo "$@" | tee -a "$OUT/summary.txt"; }
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

if [ -n "${BUILD:-}" ]; then
  rm -rf "$OUT/build-src" && git clone -q "$ROOT" "$OUT/build-src" && git -C "$OUT/build-src" checkout -q "$BUILD" || exit 1
  (cd "$OUT/build-src" && go build -o "$OUT/mcpchaos" ./cmd/mcpchaos) || exit 1
else
  (cd "$ROOT" && go build -o "$OUT/mcpchaos" ./cmd/mcpchaos) || exit 1
fi
M="$OUT/mcpchaos"
say "gate-noise: $RUNS runs per target, $MODE, build ${BUILD:-$(git -C "$ROOT" rev-parse --short HEAD)+tree}, parts: $PARTS, $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), in $OUT"

# run TARGET-NAME I ARGS...: one run of seed-incident-fast (or $WL) into TARGET-NAME/I.json
run() {
  local name=$1 i=$2; shift 2
  mkdir -p "$name"
  "$M" run "${WL:-seed-incident-fast}" -o "$name/$i.json" --progress off -q --formats none "$@" >"$name/$i.log" 2>&1
  echo "$?" >"$name/$i.status"
}

# judge KIND BASES... CURRENT: one compare; prints its class (ok, alarm, inconclusive, other);
# alarms are kept in full in alarms.txt. $FORCE adds --force.
judge() {
  local out rc
  out=$("$M" compare --json ${FORCE:-} "${@:2}" 2>/dev/null); rc=$?
  local inc; inc=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("inconclusive",0))' 2>/dev/null || echo 0)
  case $rc in
    0) if [ "$inc" != 0 ]; then echo inconclusive; else echo ok; fi ;;
    99) echo alarm; { echo "== $1: ${*:2}"; "$M" compare ${FORCE:-} "${@:2}" 2>&1; echo; } >>"$OUT/alarms.txt" ;;
    *) echo "other($rc)" ;;
  esac
}

tally() { sort | uniq -c | awk '{printf "%s %s, ", $1, $2}'; }
starved() { grep -l '"starved": true' "$@" 2>/dev/null | wc -l; }

same_build() {
  local name=$1; shift
  [ -n "$REJUDGE" ] || for i in $(seq 1 "$RUNS"); do run "$name" "$i" "$@"; done
  local bad; bad=$(grep -Lx '0' "$name"/*.status | wc -l)
  local pair multi np nm
  pair=$(for i in $(seq 1 "$RUNS"); do for j in $(seq $((i+1)) "$RUNS"); do judge pair "$name/$i.json" "$name/$j.json"; done; done | tally)
  multi=$(for j in $(seq 4 "$RUNS"); do judge multi "$name/$((j-3)).json" "$name/$((j-2)).json" "$name/$((j-1)).json" "$name/$j.json"; done | tally)
  np=$((RUNS*(RUNS-1)/2)) nm=$((RUNS>3 ? RUNS-3 : 0))
  say "$name: $RUNS runs ($bad exited non-zero, $(starved "$name"/*.json) starved); $np pairwise: $pair; $nm against the 3 before: $multi"
}

slow_verdicts() {
  local n; n=$(ls slow/*.json | wc -l)
  local v; v=$(for i in $(seq 1 "$n"); do judge slow slow-base/1.json slow-base/2.json slow-base/3.json "slow/$i.json"; done | tally)
  local p50; p50=$(for f in slow-base/1.json slow/1.json; do "$M" compare --json --force "$f" "$f" 2>/dev/null | python3 -c '
import json,sys
for r in json.load(sys.stdin)["rows"]:
    if r.get("group")=="probe" and r.get("metric")=="tool_call_latency.p50": print(r.get("current"), end="")' ; echo -n "us "; done)
  say "+5ms on every reply, 3 baselines ($(starved slow-base/*.json) of 3 baselines and $(starved slow/*.json) of $n runs starved; probe tool-call p50 base, slow: $p50): $n compares: $v (alarm = REGRESSED: wanted; ok: missed)"
}

# regression NAME BASEDIR CURDIR: each current run against the 3 baselines; a catch is exit 99
# with a "what changed:" line (the regression in words); the lines are kept in findings.txt.
regression() {
  local name=$1 base=$2 cur=$3 caught=0 words=0 n=0 out rc
  for f in "$cur"/*.json; do
    n=$((n+1))
    out=$("$M" compare ${FORCE:-} "$base/1.json" "$base/2.json" "$base/3.json" "$f" 2>&1); rc=$?
    [ $rc = 99 ] && caught=$((caught+1))
    if printf '%s\n' "$out" | grep -q '^ *what changed: '; then
      words=$((words+1)); printf '%s: %s\n' "$name" "$(printf '%s\n' "$out" | grep '^ *what changed: ' | head -3)" >>"$OUT/findings.txt"
    fi
  done
  say "session regression, $name: $n runs against 3 baselines: $caught flagged REGRESSED (exit 99), $words with a 'what changed:' line ($(starved "$base"/*.json "$cur"/*.json) of $((n+3)) runs starved)"
}

if [ -n "$REJUDGE" ]; then
  for name in builtin serve toxiproxy; do [ -d "$name" ] && part "$name" && same_build "$name"; done
  [ -d slow ] && part slow && slow_verdicts
  exit 0
fi

if [ "$MODE" = loaded ]; then
  yes >/dev/null & PIDS+=($!)
  yes >/dev/null & PIDS+=($!)
  rm -rf "$OUT/clone" && git clone -q "$ROOT" "$OUT/clone" || exit 1
  # setsid: the loop leads a process group of its own, so its go test children end with it.
  setsid bash -c 'cd "$1" && for i in $(seq 1 50); do go test -race -count=1 ./... >"$2/clone-test.$i.log" 2>&1; echo "suite $i: $?" >>"$2/clone-suite.txt"; done' _ "$OUT/clone" "$OUT" &
  GROUPS_+=($!)
  sleep 20 # let the suite's builds start
fi

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitup() { for _ in $(seq 1 300); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "not up: $1"; return 1; }
# serve VAR FLAGS...: a `mcpchaos serve` of seed-incident-fast's server (its target.builtin,
# spelled out: --from would override the FLAGS), its URL in $VAR.
serve() {
  local var=$1 port; shift; port=$(freeport)
  "$M" serve --ttl 3s --retention 8s --notify-interval 250ms --retry 200ms --addr "127.0.0.1:$port" "$@" >"$OUT/serve-$var.log" 2>&1 & PIDS+=($!)
  waitup "http://127.0.0.1:$port/healthz" || exit 1
  printf -v "$var" '%s' "http://127.0.0.1:$port/mcp"
}

serve SERVE
API_PORT=$(freeport); FRONT_PORT=$(freeport)
"$TOXI" -host 127.0.0.1 -port "$API_PORT" >"$OUT/toxiproxy.log" 2>&1 & PIDS+=($!)
waitup "http://127.0.0.1:$API_PORT/version" || exit 1
API="http://127.0.0.1:$API_PORT"
UP=${SERVE#http://}; UP=${UP%/mcp}
curl -fsS -X POST "$API/proxies" -d "{\"name\":\"front\",\"listen\":\"127.0.0.1:$FRONT_PORT\",\"upstream\":\"$UP\"}" >/dev/null || exit 1
FRONT="http://127.0.0.1:$FRONT_PORT/mcp"

part builtin && same_build builtin
part serve && same_build serve --target "$SERVE" --session-ttl 3s
part toxiproxy && same_build toxiproxy --target "$FRONT" --session-ttl 3s

if part slow; then # +5 ms on every reply: 3 baselines through the plain proxy, then the latency toxic on it
  for i in 1 2 3; do run slow-base "$i" --target "$FRONT" --session-ttl 3s; done
  curl -fsS -X POST "$API/proxies/front/toxics" -d '{"name":"plus5ms","type":"latency","stream":"downstream","attributes":{"latency":5}}' >/dev/null || exit 1
  SLOW=$(( RUNS < 10 ? RUNS : 10 ))
  for i in $(seq 1 "$SLOW"); do run slow "$i" --target "$FRONT" --session-ttl 3s; done
  curl -fsS -X DELETE "$API/proxies/front/toxics/plus5ms" >/dev/null
  slow_verdicts
fi

if part sessions; then
  serve STRICT --get-validation strict
  serve DEAD200 --ttl 0 # the server keeps serving expired ids: requests on sessions dead by the declared TTL answer 200
  for i in 1 2 3; do run sess-strict "$i" --target "$STRICT" --session-ttl 3s; done
  for i in 1 2 3; do run sess-perm "$i" --target "$SERVE" --session-ttl 3s; done
  for i in 1 2 3; do run sess-dead200 "$i" --target "$DEAD200" --session-ttl 3s; done
  regression "GET strict -> permissive" sess-strict sess-perm
  regression "dead session ids answered 200" sess-perm sess-dead200
  # the probe group's policy off: seed-incident-fast with its probe group made naive
  python3 - "$ROOT/workloads/builtin/seed-incident-fast.yaml" "$OUT/probe-off.yaml" <<'EOF'
import sys
src = open(sys.argv[1]).read()
head, sep, tail = src.partition("  - name: probe")
tail = tail.replace("    policy: probe\n    probe: ping\n", "    policy: naive\n", 1)
open(sys.argv[2], "w").write(head + sep + tail)
EOF
  for i in 1 2 3; do run sess-probe "$i"; done
  for i in 1 2 3; do WL="$OUT/probe-off.yaml" run sess-probe-off "$i"; done
  FORCE=--force regression "probe policy off" sess-probe sess-probe-off
fi
say "load at the end $(cut -d' ' -f1-3 /proc/loadavg); alarms in full: $OUT/alarms.txt; findings: $OUT/findings.txt"
[ "$MODE" = loaded ] && say "the clone's suite beside it: $(tr '\n' ' ' <"$OUT/clone-suite.txt" 2>/dev/null)"
exit 0
