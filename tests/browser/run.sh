#!/usr/bin/env bash
# timeline.html in a real browser: renders every shipped scenario and the
# 1-hour etcd run near the event budget (tests/cli/big-etcd-1h.json), then
# drives Debian's Chromium headless with puppeteer-core (tests/browser/
# timeline.test.js), which asserts on the DOM after interactions.
#   run.sh <fencesim> <source dir> <build dir>
# puppeteer-core is installed with `npm ci` from tests/browser/package-lock.json
# into <build dir>/browser-tests. Skipped (exit 77) only when node or npm is
# missing; tools/deps.sh --test installs them, so CI runs it.
# FENCESIM_SCREENSHOTS=<dir> also writes the README's screenshots there.
set -euo pipefail
fencesim=$1
src=$2
build=$3
source "$src/tests/support/tier_tools.sh"
need_program browser node nodejs
need_program browser npm npm
need_program browser chromium chromium
dir=$build/browser-tests
mkdir -p "$dir"
if ! cmp -s "$src/tests/browser/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules/puppeteer-core" ]; then
  cp "$src/tests/browser/package.json" "$src/tests/browser/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=()
for f in "$src"/scenarios/*.json; do [[ "$f" == *.schema.json ]] || files+=("$f"); done
files+=("$src/tests/cli/big-etcd-1h.json")
rc=0
"$fencesim" run "${files[@]}" --out "$work/out" --quiet 2>/dev/null || rc=$?
((rc <= 1)) || { echo "fencesim run failed with exit code $rc"; exit 1; }
shots=()
[ -n "${FENCESIM_SCREENSHOTS:-}" ] && shots=(--screenshots "$FENCESIM_SCREENSHOTS")
cd "$work"
CHROMIUM=$(command -v chromium) NODE_PATH="$dir/node_modules" node "$src/tests/browser/timeline.test.js" "$work/out" "${shots[@]}"
