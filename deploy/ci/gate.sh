#!/bin/sh
# gate.sh: the release gate of docs/gate.md ("A baseline in CI") as one step of a CI job. The
# GitHub Action (action.yml at the repository's root) and the GitLab template
# (deploy/ci/gitlab-ci.yml) both run this script, so the two pipelines judge alike.
#
# It runs the workload with the job's labels, compares the run with the newest good runs of the
# baseline, writes the report, and adds the run to the baseline only when both the run and the
# compare passed. A run that failed never passes the job, whatever compare says.
#
# Inputs, from the environment:
#   MCPCHAOS_WORKLOAD  workload file or built-in name (required)
#   MCPCHAOS_LABELS    labels KEY=VALUE, separated by spaces or newlines (values without spaces)
#   MCPCHAOS_ARGS      more `mcpchaos run` flags, split on spaces (e.g. "--target http://127.0.0.1:8080/mcp")
#   MCPCHAOS_BASELINE  the baseline directory, kept by the pipeline between jobs (default mcpchaos-baseline)
#   MCPCHAOS_LAST      compare with the N newest baseline runs (default 5)
#   MCPCHAOS_KEEP      keep the N newest runs in the baseline (default 10)
#   MCPCHAOS_OUT       where the outputs go (default mcpchaos-out)
#   MCPCHAOS_STRICT    "true": an inconclusive compare (a starved runner) fails the job too
#   MCPCHAOS_DEFER_EXIT "true": exit 0 and leave the verdict in `status` (GitHub: later steps
#                      upload the outputs first; the action's last step exits with it)
#   MCPCHAOS           the binary (default: mcpchaos on PATH)
#
# Outputs, in $MCPCHAOS_OUT: current.json (the export), current.junit.xml, compare.md (the
# Markdown verdict, for a step summary or a merge-request comment), report.html (the baseline's
# history and this run), gate.env (the outputs below as key=value) and mcpchaos.env (the same as
# MCPCHAOS_KEY=VALUE: GitLab's dotenv report).
# Where the runner gives them: GITHUB_OUTPUT gets status, run-status, compare-status, joined,
# export, junit, report, compare; GITHUB_STEP_SUMMARY gets compare.md.
#
# Exit status: the run's own if it did not pass (1 failed, 2 bad workload or flags, 99 its
# thresholds failed, 130 interrupted); otherwise compare's (0 passed, 99 regressed; with
# MCPCHAOS_STRICT, inconclusive is 99 too); 2 if this script was called wrong.
set -u

mcpchaos=${MCPCHAOS:-mcpchaos}
workload=${MCPCHAOS_WORKLOAD:-}
baseline=${MCPCHAOS_BASELINE:-mcpchaos-baseline}
last=${MCPCHAOS_LAST:-5}
keep=${MCPCHAOS_KEEP:-10}
out=${MCPCHAOS_OUT:-mcpchaos-out}

if [ -z "$workload" ]; then
  echo "gate.sh: MCPCHAOS_WORKLOAD is empty: name a workload file or a built-in (mcpchaos validate --help)" >&2
  exit 2
fi
for n in "$last" "$keep"; do
  case $n in '' | *[!0-9]* | 0) echo "gate.sh: MCPCHAOS_LAST and MCPCHAOS_KEEP must be whole numbers above 0, not \"$n\"" >&2; exit 2 ;; esac
done
mkdir -p "$out" "$baseline" || exit 2

# Labels become --label flags; the run id and the labels land in the export, JUnit and report.
set --
for l in ${MCPCHAOS_LABELS:-}; do
  set -- "$@" --label "$l"
done

# shellcheck disable=SC2086 # MCPCHAOS_ARGS is split on purpose
"$mcpchaos" run "$workload" "$@" ${MCPCHAOS_ARGS:-} -o "$out/current.json" --formats junit --progress off
run_status=$?

compare_status=
if ls "$baseline"/*.json >/dev/null 2>&1; then
  strict=
  if [ "${MCPCHAOS_STRICT:-}" = true ]; then strict=--strict; fi
  "$mcpchaos" compare --last "$last" $strict "$baseline" "$out/current.json" --markdown >"$out/compare.md"
  compare_status=$?
  "$mcpchaos" report "$baseline"/*.json "$out/current.json" -o "$out/report.html" || true
else
  {
    echo "### mcpchaos compare: no baseline yet"
    echo
    echo "\`$baseline\` holds no run: this run starts the baseline if it passed (run exit status $run_status)."
  } >"$out/compare.md"
  compare_status=0
  if [ -f "$out/current.json" ]; then
    "$mcpchaos" report "$out/current.json" -o "$out/report.html" || true
  fi
fi

status=$compare_status
if [ "$run_status" -ne 0 ]; then
  status=$run_status # a run that did not pass never passes the job
fi

joined=false
if [ "$status" -eq 0 ]; then # a good run joins the baseline; keep the newest $keep
  cp "$out/current.json" "$baseline/$(date -u +%Y%m%dT%H%M%SZ)-$$.json" && joined=true
  ls -1t "$baseline"/*.json | tail -n +"$((keep + 1))" | while IFS= read -r old; do rm -f -- "$old"; done
fi

{
  echo "status=$status"
  echo "run-status=$run_status"
  echo "compare-status=$compare_status"
  echo "joined=$joined"
  echo "export=$out/current.json"
  echo "junit=$out/current.junit.xml"
  echo "report=$out/report.html"
  echo "compare=$out/compare.md"
} >"$out/gate.env"
while IFS='=' read -r k v; do # the same for GitLab's dotenv report: MCPCHAOS_STATUS=...
  printf 'MCPCHAOS_%s=%s\n' "$(echo "$k" | tr 'a-z-' 'A-Z_')" "$v"
done <"$out/gate.env" >"$out/mcpchaos.env"
if [ -n "${GITHUB_OUTPUT:-}" ]; then cat "$out/gate.env" >>"$GITHUB_OUTPUT"; fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/compare.md" >>"$GITHUB_STEP_SUMMARY"; fi

echo "mcpchaos gate: run exit $run_status, compare exit $compare_status, job status $status, joined the baseline: $joined" >&2
if [ "${MCPCHAOS_DEFER_EXIT:-}" = true ]; then
  exit 0
fi
exit "$status"
