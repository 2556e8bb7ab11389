#!/usr/bin/env bash
# Issue #35: `fencesim merge` wrote its target folder in place — it removed
# the old merged sweep's seed<N>/ folders first and copied the new ones one
# by one, so a merge that failed (or was interrupted) half way left the old
# sweep.json listing report folders that were gone. Now the merged folder is
# staged beside the target and swapped in whole: a failed merge leaves the
# previous merged folder byte for byte as it was, and no staging folder.
#
# The failure is made without timing: one shard's kept run folder holds a
# FIFO, which std::filesystem::copy refuses ("not supported"), after the
# seeds before it were copied.
set -euo pipefail
fencesim=$1
scenario=$2  # a scenario whose sweep fails some seeds (kept with --keep failing)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in 1 2; do
  "$fencesim" sweep "$scenario" --seeds 1..6 --jobs 2 --keep failing --shard $i/2 --out "$work/sh" \
    >/dev/null 2>&1 || [ $? -eq 1 ] || { echo "shard $i/2 failed"; exit 1; }
done
code=0
"$fencesim" merge "$work"/sh/*/sweep.json --out "$work/m" >"$work/first.txt" 2>&1 || code=$?
[ "$code" -le 1 ] || { echo "the first merge exited $code:"; cat "$work/first.txt"; exit 1; }
merged=("$work"/m/*)
[ -d "${merged[0]}" ] || { echo "no merged folder in $work/m"; exit 1; }
seeds=("${merged[0]}"/seed*)
[ "${#seeds[@]}" -ge 2 ] || { echo "the merge kept fewer than 2 run folders; pick a scenario that fails more seeds"; exit 1; }
cp -a "$work/m" "$work/before"

# Break the last kept folder of the last shard that kept any: the copy fails after earlier ones succeeded.
last=$(ls -d "$work"/sh/*/seed* | sort -V | tail -1)
mkfifo "$last/a-fifo"
code=0
"$fencesim" merge "$work"/sh/*/sweep.json --out "$work/m" >"$work/second.txt" 2>&1 || code=$?
if [ "$code" -ne 2 ]; then
  echo "a merge whose copy fails should exit 2, got $code:"; cat "$work/second.txt"; exit 1
fi
grep -q "fencesim: merge: " "$work/second.txt" || { echo "no error line:"; cat "$work/second.txt"; exit 1; }
[ "$(wc -l <"$work/second.txt")" -eq 1 ] || { echo "more than one line:"; cat "$work/second.txt"; exit 1; }
if ! diff -r "$work/before" "$work/m" >"$work/diff.txt"; then
  echo "a failed merge changed the previous merged folder:"; head -20 "$work/diff.txt"; exit 1
fi
leftover=$(find "$work/m" -name '.*' | head -5)
[ -z "$leftover" ] || { echo "a failed merge left staging files: $leftover"; exit 1; }
echo "a failed merge left the previous merged folder as it was ($(ls "${merged[0]}" | wc -l) entries) and no staging folder"
