#!/usr/bin/env bash
# busy-suite.sh: does the README's test command pass on a busy 2-core machine? A benchmark of
# the suite's robustness, not a test: it takes an hour or more, and its figures are of the
# machine it ran on (docs/gate.md, "The suite on a busy machine").
#
#   bench/busy-suite.sh [RUNS] [test|ci]     (default: 5 runs of the test command)
#
# Two lanes run side by side, each from fresh clones of this tree's HEAD (or of REPO@REV):
#   measured:   RUNS runs, one after another, of `go test -race -timeout 30m ./...` (test) or
#               `CI=true bash .ci/run` (ci, which installs what the tests need and runs the same
#               command);
#   background: a second clone running `go test -race ./...` in a loop for as long as the
#               measured lane runs (its runs are recorded too: each ran beside a suite);
# and two CPU hogs. This is the load issue 21 names: "beside a second clone's go test -race
# ./... in a loop and two CPU hogs". Everything is started here and ended by PID (the lanes by
# their process group) when the measured lane is done, or on Ctrl-C.
#
# Environment: REPO (default: this tree), REV (default: HEAD), OUT (default: a new
# /tmp/busy-suite.XXXXXX). Each run's output is kept in OUT/<lane>-<n>.log; OUT/summary.txt
# has a line per run: lane, exit status, minutes, load averages at the end, and the tests that
# failed (`--- FAIL` lines, and packages that failed to build or timed out).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
MODE=${2:-test}
REPO=${REPO:-$ROOT}
REV=$(git -C "$REPO" rev-parse "${REV:-HEAD}") || exit 1
OUT=${OUT:-$(mktemp -d /tmp/busy-suite.XXXXXX)}
case "$MODE" in
test) CMD=${CMD:-'go test -race -timeout 30m ./...'} ;;
ci) CMD=${CMD:-'CI=true bash .ci/run'} ;;
*) echo "usage: $0 [RUNS] [test|ci]" >&2; exit 2 ;;
esac
BGCMD=${BGCMD:-'go test -race ./...'} # CMD and BGCMD may be set to try the script itself quickly
# Every run runs every test: clones of one commit share the Go build cache, and go test would
# otherwise answer a later run's packages from an earlier run's results ("(cached)").
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"
PIDS=()
GROUPS_=()
cleanup() {
  for g in "${GROUPS_[@]}"; do kill -- "-$g" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$OUT"/clone-* # a run ended mid-way leaves its clone; the logs stay
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT" || exit 1
say() { echo "$@" | tee -a "$OUT/summary.txt"; }

# one run in a fresh clone: the clone, the command, a summary line
one() { # lane n cmd
  local lane=$1 n=$2 cmd=$3 dir="$OUT/clone-$1-$2" log="$OUT/$1-$2.log" t0 rc failed
  rm -rf "$dir"
  git clone -q "$REPO" "$dir" && git -C "$dir" checkout -q "$REV" || return 1
  t0=$(date +%s)
  (cd "$dir" && bash -c "$cmd") >"$log" 2>&1
  rc=$?
  failed=$(grep -E '^\s*--- FAIL|^FAIL\s|panic: test timed out' "$log" | sed 's/ (.*//' | sort -u | tr '\n' ' ')
  say "$lane $n: exit $rc, $(( ($(date +%s) - t0 + 30) / 60 )) min, load $(cut -d' ' -f1-3 /proc/loadavg), failed: ${failed:-none}"
  rm -rf "$dir"
  return $rc
}

say "busy-suite: $RUNS runs of '$CMD' at $REV, $(nproc) CPUs, $(date -u +%FT%TZ), in $OUT"
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  PIDS+=($!)
done
setsid bash -c "$(declare -f one say); OUT='$OUT' REPO='$REPO' REV='$REV'; n=0; while :; do n=\$((n+1)); one background \$n '$BGCMD'; done" &
GROUPS_+=($!)
pass=0
for n in $(seq 1 "$RUNS"); do
  # in its own process group, waited for with `wait`, so that a signal is handled at once (bash
  # runs a trap only after a foreground command ends) and ends the whole run by its group
  setsid bash -c "$(declare -f one say); OUT='$OUT' REPO='$REPO' REV='$REV'; one measured $n '$CMD'" &
  GROUPS_+=($!)
  wait $! && pass=$((pass + 1))
done
say "measured: $pass of $RUNS passed ('$CMD', beside a second clone's suite loop and two CPU hogs)"
[ "$pass" = "$RUNS" ]
