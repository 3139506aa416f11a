#!/usr/bin/env bash
# The unit suite, five times in a row, from a fresh clone in a 0700 directory,
# while stress-ng loads two CPUs (issue 13: tests pass wherever the checkout
# is, and never flake). Reports pass/fail per run; exits non-zero if any run
# failed.
#
#   scripts/stress-unit.sh [RUNS]        (default 5; RUNS=1 for a quick check)
#
# Needs git, npm and stress-ng (Debian package stress-ng). Clones the current
# HEAD (commit it first: uncommitted changes are not tested). The clone and
# its logs are kept under the printed directory when a run fails.
set -euo pipefail

runs=${1:-5}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
head=$(git -C "$repo" rev-parse HEAD)
command -v stress-ng >/dev/null || { echo "stress-ng not found (apt-get install stress-ng)" >&2; exit 2; }

work=$(mktemp -d)            # 0700, as mktemp makes it: the case issue 13 found
chmod 700 "$work"
clone="$work/tsbgp"
echo "stress-unit: HEAD $head, clone in $clone ($(stat -c %a "$work"))"
git clone -q --no-local "$repo" "$clone"
git -C "$clone" checkout -q "$head"
(cd "$clone" && npm ci --no-audit --no-fund >"$work/npm-ci.log" 2>&1) || { echo "npm ci failed: $work/npm-ci.log" >&2; exit 2; }

stress-ng --cpu 2 --timeout 0 --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null || true' EXIT

failed=0
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if (cd "$clone" && CI=true npx vitest run --project unit >"$work/run-$i.log" 2>&1); then
    result=pass
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  summary=$(grep -E '^\s*Tests\s' "$work/run-$i.log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g; s/^ *//')
  echo "run $i/$runs: $result in $(( $(date +%s) - t0 )) s — ${summary:-no summary (see $work/run-$i.log)}"
  [ "$result" = pass ] || grep -E '(FAIL|×) ' "$work/run-$i.log" | sed 's/\x1b\[[0-9;]*m//g' | sort -u | head -20 | sed 's/^/    /'
done

echo "stress-unit: $((runs - failed))/$runs runs passed under stress-ng --cpu 2"
if [ "$failed" -eq 0 ]; then rm -rf "$work"; else echo "logs: $work"; fi
[ "$failed" -eq 0 ]
