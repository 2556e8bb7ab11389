#!/usr/bin/env bash
# Rewrites the goldens on purpose, after a change in behaviour:
#   tests/golden/GOLDEN.tsv   every shipped scenario's seed, fingerprint,
#                             events, verdicts and metrics (one row each)
#   reports/<name>/           the few report folders kept (those the docs show
#                             and the rendering tests read), and reports/MATRIX.*
# Review the diff, then commit it on its own with a message saying why the
# behaviour changed.
#   tools/regen-reports.sh [path/to/fencesim]
set -euo pipefail
cd "$(dirname "$0")/.."
fencesim=${1:-build/fencesim}
python3 tests/golden/golden.py --fencesim "$fencesim" --source-dir . regen
python3 tests/golden/golden.py --fencesim "$fencesim" --source-dir . regen-stored
echo "review with: git diff --stat tests/golden reports/"
