#!/usr/bin/env bash
# gate-load.sh: what `mcpchaos compare` detects at which load (docs/gate.md, "What the gate
# detects at which load"). A benchmark, not a test: its figures are the machine's.
#
#   bench/gate-load.sh [RUNS] [LOADS]        default: 12 runs, LOADS="quiet hogs loaded"
#   bench/gate-load.sh rejudge DIR           the compares again over the runs DIR kept
#   ONLY=ttl bench/gate-load.sh [RUNS] [LOADS]   only the same-build runs and the TTL rows
#                                            (TTL_RUNS of them, default 3)
#
# A server (`mcpchaos serve`, seed-incident-fast's) behind an external toxiproxy-server, the
# run's clients on mcpchaos's embedded proxies in front of it, as issue 28 describes. For each
# load, in this order (each load started before its runs and ended, by PID, after them):
#   quiet   nothing added (other jobs on the machine stay: `uptime` is recorded with each figure)
#   hogs    two CPU hogs (`yes >/dev/null`)
#   loaded  two CPU hogs and a second fresh clone's `go test -race ./...` in a loop
# it takes RUNS same-build runs (the first 3 are the load's baselines), 10 runs with +5 ms on
# every reply (a latency toxic on the toxiproxy-server), 10 with +2 ms, and 3 runs of a server
# whose sessions die after 1 s while the workload declares 3 s; then 3 runs of
# bench/workloads/ttl-watch-fast.yaml on the 3 s server and TTL_RUNS on the 1 s one (the TTL
# watched: docs/gate.md, "Session life"). Then it compares:
#   same build    every pair, every run against the 3 before it, and every run against 7 triples
#                 of the others (rotations; with 3 baselines latency is judged): exit 99 is a
#                 false alarm
#   +5 ms, +2 ms  each run against the load's 3 baselines, and against the quiet baselines
#   TTL 3 s → 1 s each run against the load's 3 baselines: exit 99 with a "what changed:" line
#   TTL watched   each 1 s run against the 3 watch baselines: exit 99, "sessions now die"
# Needs: go, git, curl, python3, toxiproxy-server ($(go env GOPATH)/bin/server).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = rejudge ]; then
  REJUDGE=1 OUT=$2 RUNS=$(cat "$2/runs") LOADS=$(cat "$2/loads")
else
  REJUDGE="" RUNS=${1:-12} LOADS=${2:-quiet hogs loaded}
  OUT=${OUT:-$(mktemp -d /tmp/gate-load.XXXXXX)}
fi
TOXI=${TOXIPROXY_SERVER:-$(go env GOPATH)/bin/server}
PIDS=() GROUPS_=()
cleanup() {
  for g in "${GROUPS_[@]}"; do kill -- "-$g" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
mkdir -p "$OUT" && cd "$OUT" || exit 1
echo "$RUNS" >runs; echo "$LOADS" >loads
(cd "$ROOT" && go build -o "$OUT/mcpchaos" ./cmd/mcpchaos) || exit 1
M="$OUT/mcpchaos"
WATCH="$ROOT/bench/workloads/ttl-watch-fast.yaml"
say() { echo "$@" | tee -a "$OUT/summary.txt"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
say "gate-load: $RUNS runs per load, loads: $LOADS; build $(git -C "$ROOT" rev-parse --short HEAD)+tree; $(date -u +%FT%TZ); $(nproc) CPUs; load $(load)"

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitup() { for _ in $(seq 1 300); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "not up: $1"; return 1; }
# front NAME TTL: a `mcpchaos serve` with sessions of TTL behind a toxiproxy-server proxy; its
# URL in FRONT_NAME, the toxiproxy-server's API in API.
front() {
  local name=$1 ttl=$2 sp fp
  sp=$(freeport) fp=$(freeport)
  "$M" serve --ttl "$ttl" --retention 8s --notify-interval 250ms --retry 200ms --addr "127.0.0.1:$sp" >"$OUT/serve-$name.log" 2>&1 & PIDS+=($!)
  waitup "http://127.0.0.1:$sp/healthz" || exit 1
  curl -fsS -X POST "$API/proxies" -d "{\"name\":\"$name\",\"listen\":\"127.0.0.1:$fp\",\"upstream\":\"127.0.0.1:$sp\"}" >/dev/null || exit 1
  printf -v "FRONT_$name" '%s' "http://127.0.0.1:$fp/mcp"
}
toxic() { # toxic NAME MS: +MS on every reply of proxy NAME (0: none)
  curl -fsS -X DELETE "$API/proxies/$1/toxics/plus" >/dev/null 2>&1
  [ "$2" = 0 ] || curl -fsS -X POST "$API/proxies/$1/toxics" -d "{\"name\":\"plus\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$2}}" >/dev/null || exit 1
}
# run DIR I URL [WORKLOAD]: one run of WORKLOAD (seed-incident-fast) into DIR/I.json, the load
# beside it in DIR/I.load
run() {
  mkdir -p "$1"
  "$M" run "${4:-seed-incident-fast}" --target "$3" --session-ttl 3s -o "$1/$2.json" --progress off -q --formats none >"$1/$2.log" 2>&1
  echo "$?" >"$1/$2.status"; load >"$1/$2.load"
}
start_load() {
  case $1 in
  hogs | loaded)
    yes >/dev/null & PIDS+=($!)
    yes >/dev/null & PIDS+=($!) ;;
  esac
  if [ "$1" = loaded ]; then
    [ -d "$OUT/clone" ] || git clone -q "$ROOT" "$OUT/clone" || exit 1
    setsid bash -c 'cd "$1" && for i in $(seq 1 50); do go test -race -count=1 ./... >"$2/clone-test.$i.log" 2>&1; echo "suite $i: $?" >>"$2/clone-suite.txt"; done' _ "$OUT/clone" "$OUT" &
    GROUPS_+=($!)
    sleep 20 # the suite's builds under way
  fi
}
stop_load() { cleanup_load; }
cleanup_load() {
  for g in "${GROUPS_[@]}"; do kill -- "-$g" 2>/dev/null; done
  GROUPS_=()
  local keep=()
  for p in "${PIDS[@]}"; do
    if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = yes ]; then kill "$p" 2>/dev/null; else keep+=("$p"); fi
  done
  PIDS=("${keep[@]}")
}

if [ -z "$REJUDGE" ]; then
  AP=$(freeport)
  "$TOXI" -host 127.0.0.1 -port "$AP" >"$OUT/toxiproxy.log" 2>&1 & PIDS+=($!)
  API="http://127.0.0.1:$AP"
  waitup "$API/version" || exit 1
  front main 3s
  front short 1s # sessions die after 1 s; the workload declares 3 s
  for L in $LOADS; do
    start_load "$L"
    for i in $(seq 1 "$RUNS"); do run "$L/same" "$i" "$FRONT_main"; done
    if [ "${ONLY:-}" != ttl ]; then
      toxic main 5; for i in $(seq 1 10); do run "$L/plus5" "$i" "$FRONT_main"; done
      toxic main 2; for i in $(seq 1 10); do run "$L/plus2" "$i" "$FRONT_main"; done
      toxic main 0
    fi
    for i in $(seq 1 "${TTL_RUNS:-3}"); do run "$L/ttl1" "$i" "$FRONT_short"; done
    for i in 1 2 3; do run "$L/watch" "$i" "$FRONT_main" "$WATCH"; done
    for i in $(seq 1 "${TTL_RUNS:-3}"); do run "$L/watch1" "$i" "$FRONT_short" "$WATCH"; done
    stop_load
    say "$L: runs done at $(date -u +%T), load $(load)"
  done
fi

# verdict BASES... CURRENT: the word compare's JSON says (ok, regressed, inconclusive, could
# not run; "error" for any other exit); alarms and findings are kept in full.
verdict() {
  local out rc
  out=$("$M" compare --json "$@" 2>/dev/null); rc=$?
  case $rc in
  0 | 1 | 99) printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("verdict") or ("regressed" if d.get("regressions") else ("inconclusive" if d.get("inconclusive") else "ok")))' 2>/dev/null || echo "error($rc)" ;;
  *) echo "error($rc)" ;;
  esac
  [ $rc = 99 ] && { echo "== ${*}"; "$M" compare "$@" 2>&1 | head -12; echo; } >>"$OUT/alarms.txt"
  return 0
}
# cuts LOAD DIR PATTERN BASES...: each run in LOAD/DIR (a shorter TTL) compared with the bases;
# sets n (runs), caught (exit 99) and words (outputs with a line matching PATTERN, the sentence
# that names the change, kept in findings.txt).
cuts() {
  local l=$1 dir=$2 pat=$3 f out rc
  shift 3
  caught=0 words=0 n=0
  for f in "$l/$dir"/*.json; do
    n=$((n+1))
    out=$("$M" compare "$@" "$f" 2>&1); rc=$?
    [ $rc = 99 ] && caught=$((caught+1))
    if printf '%s\n' "$out" | grep -q "$pat"; then
      words=$((words+1)); printf '%s %s %s: %s\n' "$l" "$dir" "$f" "$(printf '%s\n' "$out" | grep "$pat" | head -3 | tr '\n' ' ')" >>"$OUT/findings.txt"
    fi
  done
}
tally() { sort | uniq -c | awk '{printf "%s %s, ", $1, $2}'; }
loads() { cat "$@" 2>/dev/null | awk '{print $1}' | sort -n | sed -n '1p;$p' | tr '\n' ' '; }
starved() { grep -l '"starved": true' "$@" 2>/dev/null | wc -l; }
p50() { # p50 of the probe group's HIST over runs: min..max
  python3 - "$@" <<'PY'
import json,sys
h=sys.argv[1]; vs=[]
for f in sys.argv[2:]:
    try: e=json.load(open(f))
    except Exception: continue
    g=[x for x in e["groups"] if x["name"]=="probe"][0]["histograms"].get(h,{})
    if g.get("count"): vs.append(g["p50_us"]/1000)
print("%.2f..%.2f ms" % (min(vs),max(vs)) if vs else "none", end="")
PY
}
for L in $LOADS; do
  d=$L/same n=$(ls "$d"/*.json 2>/dev/null | wc -l)
  pair=$(for i in $(seq 1 "$n"); do for j in $(seq $((i+1)) "$n"); do verdict "$d/$i.json" "$d/$j.json"; done; done | tally)
  multi=$(for j in $(seq 4 "$n"); do verdict "$d/$((j-3)).json" "$d/$((j-2)).json" "$d/$((j-1)).json" "$d/$j.json"; done | tally)
  # every run against 7 triples of the others (rotations): the compares that judge latency
  rot=$(for j in $(seq 1 "$n"); do for k in $(seq 0 6); do
    set -- ; for o in 1 2 3; do set -- "$@" "$d/$(( (j - 1 + k + o) % n + 1 )).json"; done
    verdict "$@" "$d/$j.json"; done; done | tally)
  say "$L same build: $n runs ($(starved "$d"/*.json) starved; load $(loads "$d"/*.load)); $((n*(n-1)/2)) pairwise: $pair; $((n>3 ? n-3 : 0)) against the 3 before: $multi; $((n*7)) against 3 others (rotations): $rot; server_latency p50 $(p50 server_latency "$d"/*.json), tool_call_latency p50 $(p50 tool_call_latency "$d"/*.json)"
  for s in plus5 plus2; do
    [ -d "$L/$s" ] || continue
    own=$(for f in "$L/$s"/*.json; do verdict "$d/1.json" "$d/2.json" "$d/3.json" "$f"; done | tally)
    q=""
    if [ "$L" != quiet ] && [ -d quiet/same ]; then
      q="; against quiet baselines: $(for f in "$L/$s"/*.json; do verdict quiet/same/1.json quiet/same/2.json quiet/same/3.json "$f"; done | tally)"
    fi
    say "$L $s: $(ls "$L/$s"/*.json | wc -l) runs ($(starved "$L/$s"/*.json) starved; load $(loads "$L/$s"/*.load)); against its load's 3 baselines: $own$q; server_latency p50 $(p50 server_latency "$L/$s"/*.json), tool_call_latency p50 $(p50 tool_call_latency "$L/$s"/*.json)"
  done
  cuts "$L" ttl1 'what changed: ' "$d/1.json" "$d/2.json" "$d/3.json"
  say "$L TTL 3s -> 1s: $n runs ($(starved "$L/ttl1"/*.json) starved) against 3 baselines: $caught exit 99, $words with a 'what changed:' line"
  # the TTL watched (bench/workloads/ttl-watch-fast.yaml): 3 baselines on the 3 s server, then
  # runs on the 1 s server; a false alarm among the baselines is each against the other two
  [ -d "$L/watch1" ] || continue
  same=$(for j in 1 2 3; do set -- ; for o in 1 2 3; do [ $o = $j ] || set -- "$@" "$L/watch/$o.json"; done; verdict "$@" "$L/watch/$j.json"; done | tally)
  cuts "$L" watch1 'sessions now die' "$L/watch/1.json" "$L/watch/2.json" "$L/watch/3.json"
  say "$L TTL watched (ttl-watch-fast), 3s -> 1s: $n runs ($(starved "$L/watch1"/*.json) starved; load $(loads "$L/watch1"/*.load)) against 3 baselines: $caught exit 99, $words saying 'sessions now die'; the baselines each against the other two: $same"
done
say "done $(date -u +%T), load $(load); alarms: $OUT/alarms.txt; findings: $OUT/findings.txt"
[ -f "$OUT/clone-suite.txt" ] && say "the clone's suite beside it: $(tr '\n' ' ' <"$OUT/clone-suite.txt")"
exit 0
