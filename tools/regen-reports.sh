#!/usr/bin/env bash
# Regenerates the reference reports in reports/ from the shipped scenarios
# (and reports/MATRIX.* from scenarios/matrices/seed-table.json). Run it on purpose after a change in behaviour, then
# review the diff: the golden-report test compares these files byte for byte.
#   tools/regen-reports.sh [path/to/fencesim]
set -euo pipefail
cd "$(dirname "$0")/.."
fencesim=${1:-build/fencesim}
mkdir -p reports
find reports -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
files=()
for f in scenarios/*.json; do [[ "$f" == *.schema.json ]] || files+=("$f"); done
# Exit code 1 (an expectation not met) must not happen for shipped files.
"$fencesim" run "${files[@]}" --out reports --quiet
"$fencesim" matrix scenarios/matrices/seed-table.json --out reports --quiet
echo "reports/ regenerated; review with: git diff --stat reports/"
