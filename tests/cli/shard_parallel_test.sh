#!/usr/bin/env bash
# A sweep in two shards through the real GNU parallel (Debian's `parallel`),
# merged with `fencesim merge`, is the unsharded sweep byte for byte:
# sweep.json, summary.md and the kept run report folders. Once with the
# shard on the command line (--shard {}/2), once with --shard auto reading
# PARALLEL_SEQ (and FENCESIM_SHARD_COUNT), as docs/SWEEP.md shows.
set -euo pipefail
fencesim=$1
scenario=$2   # scenarios/nemesis-pauses.json: every seed breaks mutual_exclusion, as its expect block says
seeds=1..60   # more failing runs than --keep failing keeps (20): the merge keeps the first 20 of the whole range
if ! command -v parallel >/dev/null; then
  echo "GNU parallel is not installed: apt-get install -y parallel (tools/deps.sh --test installs it)"
  exit 1
fi
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  echo "'parallel' on PATH is not GNU parallel (moreutils has another one): apt-get install -y parallel"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(basename "$scenario" .json)
status=0

"$fencesim" sweep "$scenario" --seeds "$seeds" --jobs 1 --out "$work/full" >"$work/full.txt"
# Both shards at once; --halt: a failing shard fails the test.
parallel --will-cite --halt now,fail=1 -j2 "$fencesim" sweep "$scenario" --seeds "$seeds" --jobs 1 \
  --shard {}/2 --out "$work/explicit" ::: 1 2 >"$work/explicit.txt"
FENCESIM_SHARD_COUNT=2 parallel --will-cite --halt now,fail=1 -j2 -N0 "$fencesim" sweep "$scenario" \
  --seeds "$seeds" --jobs 1 --shard auto --out "$work/auto" ::: 1 2 >"$work/auto.txt"

for way in explicit auto; do
  shards=("$work/$way/$name-sweep-shard-"*-of-2/sweep.json)
  if [ "${#shards[@]}" -ne 2 ]; then
    echo "$way: expected 2 shard folders, found: ${shards[*]}"; status=1; continue
  fi
  code=0
  "$fencesim" merge "${shards[@]}" --out "$work/$way-merged" >"$work/$way-merge.txt" || code=$?
  if [ "$code" -ne 0 ]; then
    echo "$way: fencesim merge exited $code, the unsharded sweep 0:"; cat "$work/$way-merge.txt"; status=1; continue
  fi
  if ! diff -r "$work/full/$name-sweep" "$work/$way-merged/$name-sweep" >"$work/diff.txt"; then
    echo "$way: the merge of 2 shards differs from the unsharded sweep:"; head -20 "$work/diff.txt"; status=1
  fi
  grep -q "mutual_exclusion  violated  60/60" "$work/$way-merge.txt" ||
    { echo "$way: the merge's summary lacks the 60/60 line:"; cat "$work/$way-merge.txt"; status=1; }
done
# The shards really were two: each ran its own 30 seeds.
for i in 1 2; do
  grep -q "shard $i of 2: seeds" "$work/auto.txt" || { echo "auto: no shard $i of 2 in:"; cat "$work/auto.txt"; status=1; }
done
kept=$(find "$work/full/$name-sweep" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$kept" -eq 20 ] || { echo "expected 20 kept run folders in the unsharded sweep, found $kept"; status=1; }
[ $status -eq 0 ] && echo "the merge of 2 GNU parallel shards is the unsharded sweep byte for byte ($kept kept runs)"
exit $status
