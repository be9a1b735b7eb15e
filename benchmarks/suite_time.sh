#!/usr/bin/env bash
# Wall time of CI on a fresh clone, as CI runs it: clone the committed state of this repository (HEAD, or
# the ref given) into a temporary folder, run `CI=true bash .ci/run` there (it creates .venv, installs the
# test extra and runs the whole suite on every core), then print the wall time of the whole .ci/run, the
# slowest tests and the test time per file (benchmarks/durations_by_file.py).
#
#   bash benchmarks/suite_time.sh [REF]          # e.g. HEAD (default), main, a commit
#   KEEP=1 bash benchmarks/suite_time.sh         # keep the clone and its log (printed at the end)
#
# The budget (issue 23): within 20 minutes on 2 cores, .venv included. Run it on an idle machine: other
# work on the cores inflates every number.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ref=${1:-HEAD}
commit=$(git -C "$here" rev-parse --verify "$ref^{commit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/udk-suite-time.XXXXXX")
log="$work/ci.log"
cleanup() { if [ -z "${KEEP:-}" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

git clone --quiet --no-checkout "$here" "$work/clone"
git -C "$work/clone" checkout --quiet "$commit"
echo "== fresh clone of $ref ($commit) in $work/clone; $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

start=$(date +%s)
set +e
# --durations=0 -vv: every test's time, for the sums per file (the log holds them; -vv lists every test too).
(cd "$work/clone" && CI=true PYTEST_ARGS="-ra --durations=0 -vv" bash .ci/run </dev/null) >"$log" 2>&1
status=$?
set -e
wall=$(( $(date +%s) - start ))

grep -E "^(== |=+ .*(passed|failed|error).* =+$)" "$log" | tail -n 12 || true
echo
python3 "$here/benchmarks/durations_by_file.py" "$log" --top 15 --files 20 || true
echo
printf '== .ci/run exit status %d; wall time %d s (%d min %02d s), .venv included; load average now: %s\n' \
    "$status" "$wall" $((wall / 60)) $((wall % 60)) "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${KEEP:-}" ]; then echo "== kept: $work (log: $log)"; fi
exit "$status"
