#!/usr/bin/env bash
# Retakes the README's timeline pictures listed in docs/pictures.tsv and
# rewrites that table's fingerprints from today's runs. The golden test
# golden.pictures_match (tests/golden/pictures.py) fails, naming this script,
# when a picture's run no longer has the stored fingerprint.
#
#   tools/retake-pictures.sh [build dir]      (default: build)
#
# It runs each picture's scenario (its file's own seed), then drives the
# timelines in Debian's headless Chromium with tests/browser/timeline.test.js
# --screenshots docs, which takes, by page:
#   worked-example-fenced  docs/timeline-worked-example.png (as it opens, top
#                          560 px) and docs/timeline-story.png (story step 3)
#   big-etcd-1h            docs/timeline-big-run.png (the whole run) and
#                          docs/timeline-big-detail.png (its first 10 s)
# (1600 x 1000 viewport). The browser test's checks run on those pages too;
# a failure stops here. Needs node, npm and chromium (tools/deps.sh --test);
# puppeteer-core is installed into <build dir>/browser-tests as the browser
# tier does. Afterwards read the words beside the pictures in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
fencesim=$build/fencesim
[ -x "$fencesim" ] || { echo "no fencesim at $fencesim (build it first, or pass the build dir)"; exit 2; }
for p in node npm chromium; do
  command -v "$p" >/dev/null || { echo "$p is not installed (tools/deps.sh --test installs it)"; exit 2; }
done
dir=$build/browser-tests
mkdir -p "$dir"
if ! cmp -s tests/browser/package-lock.json "$dir/package-lock.json" || [ ! -d "$dir/node_modules/puppeteer-core" ]; then
  cp tests/browser/package.json tests/browser/package-lock.json "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The scenarios of docs/pictures.tsv (column 2), each once.
mapfile -t files < <(grep -v '^#' docs/pictures.tsv | cut -f2 | sort -u)
rc=0
"$fencesim" run "${files[@]}" --out "$work/out" --quiet 2>/dev/null || rc=$?
((rc <= 1)) || { echo "fencesim run failed with exit code $rc"; exit 1; }
src=$PWD
(cd "$work" && CHROMIUM=$(command -v chromium) NODE_PATH="$src/$dir/node_modules" \
   node "$src/tests/browser/timeline.test.js" "$work/out" --screenshots "$src/docs")
python3 tests/golden/pictures.py --fencesim "$fencesim" --source-dir . update
git status --short docs/
