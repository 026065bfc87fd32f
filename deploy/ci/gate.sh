#!/bin/sh
# gate.sh: the release gate of docs/gate.md ("A baseline in CI") as one step of a CI job. The
# GitHub Action (action.yml at the repository's root) and the GitLab template
# (deploy/ci/gitlab-ci.yml) both run this script, so the two pipelines judge alike.
#
# It runs the workload with the job's labels, compares the run with the newest good runs of the
# baseline, writes the report, and adds the run to the baseline only when the verdict is ok: a
# run that failed, regressed, could not run or was inconclusive never joins it (the summary
# says so). A run that failed never passes the job, whatever compare says.
#
# Inputs, from the environment:
#   MCPCHAOS_WORKLOAD  workload file or built-in name (required)
#   MCPCHAOS_LABELS    labels KEY=VALUE, one per line (a value may hold spaces); a label whose
#                      value is empty (release=$CI_COMMIT_TAG on a branch pipeline) is left out
#   MCPCHAOS_ARGS      more `mcpchaos run` flags, ONE ARGUMENT PER LINE, passed as they are (no
#                      word splitting, no globbing): "--target=http://127.0.0.1:8080/mcp" or
#                      "--threshold" and "probe.tool_call_latency.p99 < 50ms" on two lines
#   MCPCHAOS_BASELINE  the baseline directory, kept by the pipeline between jobs (default mcpchaos-baseline)
#   MCPCHAOS_START_BASELINE "true": an empty baseline is started by this run. Otherwise an empty
#                      baseline (a lost cache, a mistyped key) fails the job: a gate with nothing
#                      to compare with judges nothing
#   MCPCHAOS_LAST      compare with the N newest baseline runs (default 5)
#   MCPCHAOS_KEEP      keep the N newest runs in the baseline (default 10)
#   MCPCHAOS_OUT       where the outputs go (default mcpchaos-out)
#   MCPCHAOS_POLICY    what fails the job (default auto):
#                        strict    regressed, inconclusive and could not run fail (for main)
#                        gate      regressed and could not run fail; inconclusive passes
#                        advisory  only could not run fails: the verdict is reported (for PRs)
#                        auto      advisory in a pull request's or merge request's pipeline
#                                  (GITHUB_EVENT_NAME pull_request*, CI_MERGE_REQUEST_IID set),
#                                  strict otherwise
#   MCPCHAOS_STRICT    "true": the same as MCPCHAOS_POLICY=strict (the older input)
#   MCPCHAOS_DEFER_EXIT "true": exit 0 and leave the verdict in `status` (GitHub: later steps
#                      upload the outputs first; the action's last step exits with it)
#   MCPCHAOS           the binary (default: mcpchaos on PATH)
#
# Outputs, in $MCPCHAOS_OUT: current.json (the export), current.junit.xml (the run's thresholds),
# compare.junit.xml (the verdict as a test case), compare.md (the Markdown verdict, for a step
# summary or a merge-request comment), report.html (the baseline's history and this run),
# gate.env (the outputs below as key=value) and mcpchaos.env (the same as MCPCHAOS_KEY=VALUE:
# GitLab's dotenv report). Where the runner gives them: GITHUB_OUTPUT gets verdict (ok,
# regressed, inconclusive, could not run: compare's word), status, run-status, compare-status,
# joined, export, junit, report, compare; GITHUB_STEP_SUMMARY gets compare.md. File names in the
# outputs meant for a person are relative (baseline/..., current.json), never the runner's
# temporary directory.
#
# Exit status: the run's own if it did not pass (1 failed, 2 bad workload or flags, 99 its
# thresholds failed, 130 interrupted), unless the policy is advisory; otherwise by the policy
# (0 passed, 99 regressed or, with strict, inconclusive; 1 could not run); 2 if this script was
# called wrong or the baseline is missing.
set -u

mcpchaos=${MCPCHAOS:-mcpchaos}
workload=${MCPCHAOS_WORKLOAD:-}
baseline=${MCPCHAOS_BASELINE:-mcpchaos-baseline}
last=${MCPCHAOS_LAST:-5}
keep=${MCPCHAOS_KEEP:-10}
out=${MCPCHAOS_OUT:-mcpchaos-out}
policy=${MCPCHAOS_POLICY:-auto}
if [ "${MCPCHAOS_STRICT:-}" = true ]; then policy=strict; fi
if [ "$policy" = auto ]; then
  case "${GITHUB_EVENT_NAME:-}:${CI_MERGE_REQUEST_IID:-}" in
  pull_request*:* | *:?*) policy=advisory ;;
  *) policy=strict ;;
  esac
fi

fail() { echo "gate.sh: $*" >&2; exit 2; }
[ -n "$workload" ] || fail "MCPCHAOS_WORKLOAD is empty: name a workload file or a built-in (mcpchaos validate --help)"
for n in "$last" "$keep"; do
  case $n in '' | *[!0-9]* | 0) fail "MCPCHAOS_LAST and MCPCHAOS_KEEP must be whole numbers above 0, not \"$n\"" ;; esac
done
case $policy in strict | gate | advisory) ;; *) fail "MCPCHAOS_POLICY \"$policy\": use strict (main), gate, advisory (pull requests) or auto" ;; esac
mkdir -p "$out" "$baseline" || exit 2
out=$(cd "$out" && pwd) && baseline=$(cd "$baseline" && pwd) || exit 2

# The arguments, as lists: one per line, never split on spaces nor globbed.
set -f
nl='
'
set --
IFS=$nl
for l in ${MCPCHAOS_LABELS:-}; do
  case $l in
  '') continue ;;
  *=) echo "gate.sh: label ${l%=} has no value in this pipeline: left out" >&2; continue ;;
  esac
  set -- "$@" --label "$l"
done
for a in ${MCPCHAOS_ARGS:-}; do
  set -- "$@" "$a"
done
unset IFS
set +f

have_baseline=false
if ls "$baseline"/*.json >/dev/null 2>&1; then have_baseline=true; fi
if [ "$have_baseline" = false ] && [ "${MCPCHAOS_START_BASELINE:-}" != true ]; then
  {
    echo "### mcpchaos compare: could not run"
    echo
    echo "The baseline holds no run (a lost cache, a new key, or the first job): nothing to compare with. Set \`start-baseline: true\` (GitHub) or \`MCPCHAOS_START_BASELINE: \"true\"\` (GitLab) in the job that starts one."
  } >"$out/compare.md"
  echo "gate.sh: the baseline holds no run: set MCPCHAOS_START_BASELINE=true to start one" >&2
  {
    echo "verdict=could not run"; echo "status=2"; echo "run-status="; echo "compare-status="; echo "joined=false"
  } >"$out/gate.env"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then cat "$out/gate.env" >>"$GITHUB_OUTPUT"; fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/compare.md" >>"$GITHUB_STEP_SUMMARY"; fi
  if [ "${MCPCHAOS_DEFER_EXIT:-}" = true ]; then exit 0; fi
  exit 2
fi

"$mcpchaos" run "$workload" "$@" -o "$out/current.json" --formats junit --progress off
run_status=$?

# Compare and report from a directory of links, so that what a person reads names
# baseline/FILE and current.json, not the runner's temporary paths.
view=$(mktemp -d) || exit 2
trap 'rm -rf "$view"' EXIT
ln -s "$baseline" "$view/baseline" && ln -s "$out/current.json" "$view/current.json" || exit 2

compare_status=
verdict=
if [ ! -f "$out/current.json" ]; then
  verdict="could not run"
  printf '### mcpchaos compare: Could not run\n\nThe run wrote no export (run exit status %s): see the job log.\n' "$run_status" >"$out/compare.md"
elif [ "$have_baseline" = true ]; then
  (cd "$view" && "$mcpchaos" compare --last "$last" baseline current.json --markdown --junit "$out/compare.junit.xml" >"$out/compare.md")
  compare_status=$?
  verdict=$(sed -n 's/.*<property name="verdict" value="\([a-z ]*\)".*/\1/p' "$out/compare.junit.xml" 2>/dev/null | head -n 1)
  (cd "$view" && "$mcpchaos" report baseline/*.json current.json -o "$out/report.html") || true
else
  verdict=ok
  if [ "$run_status" -ne 0 ]; then verdict=regressed; fi
  if [ "$run_status" -eq 1 ] || [ "$run_status" -eq 2 ] || [ "$run_status" -eq 130 ]; then verdict="could not run"; fi
  {
    echo "### mcpchaos compare: no baseline yet"
    echo
    echo "This job starts the baseline (start-baseline): the run joins it if it passed (run exit status $run_status)."
  } >"$out/compare.md"
  (cd "$view" && "$mcpchaos" report current.json -o "$out/report.html") || true
fi
[ -n "$verdict" ] || verdict="could not run"

# What fails the job: by the policy.
case $verdict in
ok) status=0 ;;
inconclusive) status=0; [ "$policy" = strict ] && status=99 ;;
regressed) status=99 ;;
*) status=1 ;;
esac
if [ "$run_status" -ne 0 ] && [ "$verdict" != "could not run" ]; then
  status=$run_status # a run that did not pass never passes the job
fi
if [ "$policy" = advisory ] && [ "$verdict" != "could not run" ]; then
  status=0
fi

joined=false
why="the verdict is $verdict"
if [ "$policy" = advisory ]; then
  why="the policy is advisory (a pull request's run never joins)"
elif [ "$verdict" = ok ] && [ "$run_status" -eq 0 ]; then # a good run joins the baseline; keep the newest $keep
  cp "$out/current.json" "$baseline/$(date -u +%Y%m%dT%H%M%SZ)-$$.json" && joined=true
  ls -1t "$baseline"/*.json | tail -n +"$((keep + 1))" | while IFS= read -r old; do rm -f -- "$old"; done
fi
if [ "$joined" = true ]; then
  printf '\nThis run joined the baseline.\n' >>"$out/compare.md"
else
  printf '\nThis run did not join the baseline: %s (only a run whose verdict is ok does).\n' "$why" >>"$out/compare.md"
fi

{
  echo "verdict=$verdict"
  echo "status=$status"
  echo "run-status=$run_status"
  echo "compare-status=$compare_status"
  echo "joined=$joined"
  echo "export=$out/current.json"
  echo "junit=$out/current.junit.xml"
  echo "compare-junit=$out/compare.junit.xml"
  echo "report=$out/report.html"
  echo "compare=$out/compare.md"
} >"$out/gate.env"
while IFS='=' read -r k v; do # the same for GitLab's dotenv report: MCPCHAOS_STATUS=...
  printf 'MCPCHAOS_%s=%s\n' "$(echo "$k" | tr 'a-z-' 'A-Z_')" "$v"
done <"$out/gate.env" >"$out/mcpchaos.env"
if [ -n "${GITHUB_OUTPUT:-}" ]; then cat "$out/gate.env" >>"$GITHUB_OUTPUT"; fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/compare.md" >>"$GITHUB_STEP_SUMMARY"; fi

echo "mcpchaos gate: verdict $verdict (policy $policy); run exit $run_status, compare exit ${compare_status:-none}, job status $status, joined the baseline: $joined" >&2
if [ "${MCPCHAOS_DEFER_EXIT:-}" = true ]; then
  exit 0
fi
exit "$status"
