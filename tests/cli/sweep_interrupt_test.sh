#!/usr/bin/env bash
# Issue #35 (3): a re-sweep once removed the previous sweep's seed<N>/
# folders at its start (while its sweep.json still listed them), and one
# interrupted with --keep all left hundreds of seed folders and no
# sweep.json. Now the previous complete sweep stays byte for byte as it was
# until the new one is complete, and Ctrl-C (SIGINT) leaves no staging folder.
set -euo pipefail
fencesim=$1
scenario=$2   # scenarios/worked-example-unfenced.json: quick runs
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
status=0
name=$(basename "$scenario" .json)  # the file's `scenario` name is its base name

"$fencesim" sweep "$scenario" --seeds 1..5 --keep all --out "$work/out" >/dev/null
cp -a "$work/out" "$work/before"

# A long sweep over it (--keep all), interrupted once it has written some runs.
"$fencesim" sweep "$scenario" --seeds 1..200000 --keep all --jobs 2 --out "$work/out" >/dev/null 2>"$work/err" &
pid=$!
for _ in $(seq 1 600); do  # up to 60 s for 20 kept runs to exist in its staging folder
  n=$(find "$work/out" -mindepth 2 -maxdepth 2 -type d -name 'seed*' -path "*/.$name-sweep.tmp-*" 2>/dev/null | wc -l || true)
  [ "$n" -ge 20 ] && break
  sleep 0.1
done
[ "$n" -ge 20 ] || { echo "the sweep wrote no staging folder with runs in 60 s"; status=1; }
# Mid-way: the previous folder is untouched while the new sweep runs.
diff -r "$work/before" "$work/out" --exclude=".$name-sweep.tmp-*" >"$work/diff" ||
  { echo "while the new sweep ran, the previous one changed:"; head -20 "$work/diff"; status=1; }
kill -INT "$pid"
code=0
wait "$pid" || code=$?
pid=
[ "$code" -eq 130 ] || { echo "the interrupted sweep exited $code, expected 130:"; cat "$work/err"; status=1; }
grep -q "sweep interrupted (signal 2); .* is left as it was" "$work/err" ||
  { echo "no interrupt message:"; cat "$work/err"; status=1; }
if ! diff -r "$work/before" "$work/out" >"$work/diff"; then
  echo "the previous complete sweep is not byte for byte as it was:"; head -20 "$work/diff"; status=1
fi
left=$(find "$work/out" -mindepth 1 -maxdepth 1 -name '.*' | wc -l)
[ "$left" -eq 0 ] || { echo "a staging folder remains:"; ls -a "$work/out"; status=1; }

# A re-sweep that completes replaces the folder whole: no seed folder of the old one is left.
"$fencesim" sweep "$scenario" --seeds 3..4 --keep all --out "$work/out" >/dev/null
got=$(cd "$work/out/$name-sweep" && ls -A | tr '\n' ' ')
[ "$got" = "seed3 seed4 summary.md sweep.json " ] || { echo "after a complete re-sweep the folder holds: $got"; status=1; }
[ $status -eq 0 ] && echo "an interrupted re-sweep leaves the previous sweep byte for byte and no staging folder"
exit $status
