#!/usr/bin/env bash
# fault-timeline.sh: how late the fault schedule applies and removes its faults while a hostile
# server floods the clients' streams (issue 20: within 100 ms of plan, whatever a server sends).
# A benchmark, not a test: its figures are measurements of the machine it ran on
# (docs/reliability.md, "The fault schedule against a hostile stream").
#
#   bench/fault-timeline.sh [RUNS] [MODES...]   (default: 10 runs of event-64mib gzip-stream
#                                                quiet-stream)
#
# Each run is `mcpchaos run cmd/mcpchaos/testdata/hostile-faults.yaml` (4 clients holding GET
# streams, five faults: two latency, idle_timeout, bandwidth, a `down` proxy restart, on embedded
# Toxiproxy) against one mode of internal/hostile's server (cmd/hostile-server): event-64mib
# (64 MiB events, as fast as the clients take them), gzip-stream (a gzip bomb again and again),
# and quiet-stream (keepalive comments only: the control, the same schedule without a hostile
# stream, so what the machine costs is told apart from what the stream costs). From each
# export's fault log it prints, per mode and fault, how late the fault went on and off after plan
# (max and p50 over the runs), how many runs had every change within 100 ms, and the load
# average before and after. Each run is bounded (60 s); everything started is ended by PID.
#
# Environment: OUT=DIR keeps the exports (default: a new /tmp/fault-timeline.XXXXXX).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-10}
shift || true
MODES=${*:-event-64mib gzip-stream quiet-stream}
OUT=${OUT:-$(mktemp -d /tmp/fault-timeline.XXXXXX)}
WL=$ROOT/cmd/mcpchaos/testdata/hostile-faults.yaml
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT" || exit 1

(cd "$ROOT" && go build -o "$OUT/mcpchaos" ./cmd/mcpchaos && go build -o "$OUT/hostile-server" ./internal/hostile/cmd/hostile-server) || exit 1
"$OUT/hostile-server" >"$OUT/server.url" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$OUT/server.url" ] && break; sleep 0.1; done
BASE=$(head -1 "$OUT/server.url")
[ -n "$BASE" ] || { echo "fault-timeline: the hostile server did not start" >&2; exit 1; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/summary.txt"
for mode in $MODES; do
  for i in $(seq "$RUNS"); do
    timeout -k 5 60 "$OUT/mcpchaos" run "$WL" --target "$BASE/$mode" --progress off \
      --formats none --out "$OUT/$mode-$i.json" >"$OUT/$mode-$i.out" 2>&1 &
    PIDS+=($!)
    wait "$!"
    echo "$mode run $i: exit $?, load $(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/runs.txt"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"

python3 - "$WL" "$OUT" "$RUNS" $MODES <<'EOF' | tee -a "$OUT/summary.txt"
import json, re, statistics, sys
wl, out, runs, modes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def dur(s):
    m = re.fullmatch(r"([\d.]+)(ms|s)", s)
    return float(m[1]) / (1000 if m[2] == "ms" else 1)
plan = {}  # fault -> (on, off) in seconds
for line in open(wl):
    m = re.search(r"name: ([\w-]+), toxic:.*at: (\w+), for: (\w+)", line)
    if m:
        plan[m[1]] = (dur(m[2]), dur(m[2]) + dur(m[3]))
for mode in modes:
    late = {f: {"on": [], "off": []} for f in plan}
    ok = bad = 0
    notes, gen = [], []
    for i in range(1, runs + 1):
        try:
            exp = json.load(open(f"{out}/{mode}-{i}.json"))
        except Exception as e:
            bad += 1; notes.append(f"run {i}: no export ({e.__class__.__name__})"); continue
        g = exp.get("generator") or {}
        gen.append((g.get("cpu_wait_share", 0), (g.get("gc_pauses") or {}).get("count", 0), (g.get("gc_pauses") or {}).get("max_us", 0) / 1000, (g.get("timer_lag") or {}).get("max_us", 0) / 1000, bool(g.get("starved"))))
        seen, worst = set(), 0.0
        for fa in exp.get("faults") or []:
            f = fa["fault"]
            if f not in plan: continue
            seen.add(f)
            on = fa["added_at_s"] - plan[f][0]
            off = (fa.get("removed_at_s") or float("nan")) - plan[f][1]
            late[f]["on"].append(on); late[f]["off"].append(off)
            worst = max(worst, on, off) if off == off else float("inf")
            if fa.get("error"): notes.append(f"run {i}: {f}: {fa['error'][:120]}"); worst = float("inf")
        if seen != set(plan): worst = float("inf"); notes.append(f"run {i}: never applied: {sorted(set(plan) - seen)}")
        ok += worst <= 0.1
    print(f"\n{mode}: {ok} of {runs} runs with every fault on and off within 100 ms of plan")
    print(f"  {'fault':14} {'on max':>8} {'on p50':>8} {'off max':>8} {'off p50':>8}   (ms after plan)")
    for f, d in late.items():
        ms = lambda xs, g: f"{g(xs) * 1000:8.1f}" if xs else "       -"
        print(f"  {f:14} {ms(d['on'], max)} {ms(d['on'], statistics.median)} {ms(d['off'], max)} {ms(d['off'], statistics.median)}")
    if gen:
        med = lambda i: statistics.median(x[i] for x in gen)
        print(f"  the run's own generator: starved in {sum(x[4] for x in gen)} of {len(gen)} runs; waiting for a CPU {med(0):.0%} of the time,"
              f" {med(1):.0f} GCs, GC pause max {med(2):.1f} ms, timer lag max {med(3):.1f} ms (medians over the runs)")
    for n in notes[:10]:
        print("  " + n)
EOF
echo "exports and outputs: $OUT"
