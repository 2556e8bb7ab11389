#!/usr/bin/env bash
# Renders timeline.html in headless Chromium (Debian's chromium, installed by
# tools/deps.sh --test) and checks that the page renders and shows the marks
# of the worked example: beliefs, the service's lease, the unsafe window, the
# pause, grants, the rejected late write and the counterexample line.
set -euo pipefail
fencesim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/tier_tools.sh"
need_program browser chromium chromium
"$fencesim" run "$scenario" --out "$work/out" --quiet
page=$(ls "$work"/out/*/timeline.html)
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$work/profile")
timeout 120 chromium "${flags[@]}" --dump-dom "file://$page" >"$work/dom.html" 2>/dev/null
for mark in 'class="span belief"' 'class="span held"' 'class="span unsafe"' 'class="span fault pause"' 'class="mark grant"' \
            'class="mark rejected"' 'class="counterexample"' 'mutual_exclusion'; do
  grep -q "$mark" "$work/dom.html" || { echo "missing in the rendered page: $mark"; exit 1; }
done
timeout 120 chromium "${flags[@]}" --window-size=1300,700 --screenshot="$work/shot.png" "file://$page" >/dev/null 2>&1
size=$(stat -c %s "$work/shot.png")
# A blank 1300x700 PNG is a few kB; the drawn page is far larger.
[ "$size" -gt 20000 ] || { echo "the screenshot looks blank ($size bytes)"; exit 1; }
echo "timeline rendered: $(grep -c '<title>' "$work/dom.html") titled marks, screenshot $size bytes"
