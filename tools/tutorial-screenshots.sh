#!/usr/bin/env bash
# Regenerates the timeline screenshots of docs/TUTORIAL.md (docs/tutorial/*.png):
# runs each scenario, opens its timeline.html in headless Chromium (Debian's
# `chromium`, which tools/deps.sh --test installs) and saves the top of the
# page — title, legend and the swimlanes — as a PNG. Run it after a change to
# the timeline's look; the pictures depend only on the scenario and fencesim.
#
#   tools/tutorial-screenshots.sh [build/fencesim]
#
# The picture is as tall as the page's timeline drawing plus the page's
# header above it (about 290 px at this width: title, legend, controls), 1600 px wide (as the README's pictures: narrower, a crowded window hides more labels, a rejection's among them); each PNG is 100-200 kB.
set -euo pipefail
cd "$(dirname "$0")/.."
fencesim=${1:-build/fencesim}
[ -x "$fencesim" ] || { echo "no fencesim at $fencesim (build it first, or pass its path)"; exit 2; }
command -v chromium >/dev/null || { echo "chromium is not installed (tools/deps.sh --test installs it)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p docs/tutorial

# The scenarios (scenarios/NAME.json) whose timelines docs/TUTORIAL.md shows.
shots=(
  worked-example-unfenced
  worked-example-fenced
  fenced-writes-only
  fenced-reads-and-writes
  redis-wall-clock-jump
  sentinel-failover-token-reuse-monotonic
  lagging-resource-replica
  etcd-waiter-expired-lease-3-4-3
  etcd-waiter-expired-lease-3-5
  queue-pause-unfenced
  cas-without-lock
)
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile")
for name in "${shots[@]}"; do
  "$fencesim" run "scenarios/$name.json" --out "$work/out" --quiet >/dev/null
  page=$work/out/$name/timeline.html
  # The height of the timeline drawing: the <svg id="tl">.
  svg=$({ grep -o '<svg id="tl"[^>]*height="[0-9.]*"' "$page" || true; } | head -1 |
        { grep -o ' height="[0-9.]*"' || true; } | tr -dc '0-9.')
  [ -n "$svg" ] || svg=490  # a page drawn another way: a fixed height
  height=$(( ${svg%.*} + 290 ))
  png=docs/tutorial/$name.png
  timeout 120 chromium "${flags[@]}" --window-size=1600,"$height" --screenshot="$png" "file://$page" >/dev/null 2>&1
  echo "$png $(stat -c %s "$png") bytes"
done
