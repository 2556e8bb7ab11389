#!/usr/bin/env bash
# Golden reports: regenerates the reports of every shipped scenario and
# compares them byte for byte with reports/. A difference is a change in
# behaviour: review it, and if it is intended, run tools/regen-reports.sh.
set -euo pipefail
fencesim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir"
files=()
for f in scenarios/*.json; do [[ "$f" == *.schema.json ]] || files+=("$f"); done
"$fencesim" run "${files[@]}" --out "$work" --quiet
"$fencesim" matrix scenarios/matrices/seed-table.json --out "$work" --quiet
status=0
for f in MATRIX.md MATRIX.json; do
  if ! cmp -s "reports/$f" "$work/$f"; then
    echo "reports/$f differs from a fresh 'fencesim matrix scenarios/matrices/seed-table.json':"; diff "reports/$f" "$work/$f" | head -20; status=1
  fi
done
for dir in "$work"/*/; do
  name=$(basename "$dir")
  if [ ! -d "reports/$name" ]; then
    echo "reports/$name is missing: run tools/regen-reports.sh"; status=1; continue
  fi
  if ! diff -r -q "reports/$name" "$dir" >/dev/null; then
    echo "reports/$name differs from a fresh run:"; diff -r "reports/$name" "$dir" | head -20; status=1
  fi
done
for dir in reports/*/; do
  name=$(basename "$dir")
  [ -d "$work/$name" ] || { echo "reports/$name has no shipped scenario any more"; status=1; }
done
[ $status -eq 0 ] && echo "all $(ls -d "$work"/*/ | wc -l) golden reports match"
exit $status
