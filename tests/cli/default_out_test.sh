#!/usr/bin/env bash
# `fencesim run` without --out writes out/<scenario>/ (and out/<scenario>-seed<N>/
# with --seed), never reports/ — the folder that holds the stored reports the
# golden tier compares (issue #30; a new user's run of the quick start wrote
# into reports/ and changed the tracked files).
set -euo pipefail
fencesim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$scenario" "$work/"
name=$(basename "$scenario")
cd "$work"
"$fencesim" run "$name" --quiet >/dev/null 2>&1 || [ $? -eq 1 ]
"$fencesim" run "$name" --seed 42 --quiet --history edn >/dev/null 2>&1 || [ $? -eq 1 ]
if [ -e reports ]; then
  echo "run without --out wrote into reports/:"; find reports | head; exit 1
fi
stem=$(ls out 2>/dev/null | grep -v -- '-seed42$' | head -1)
[ -n "$stem" ] || { echo "run without --out wrote no out/ folder"; exit 1; }
for f in "out/$stem/report.json" "out/$stem-seed42/report.json" "out/$stem-seed42/history.edn"; do
  [ -f "$f" ] || { echo "missing $f; found:"; find . -type f | head; exit 1; }
done
echo "run without --out wrote out/$stem/ and out/$stem-seed42/, nothing in reports/"
