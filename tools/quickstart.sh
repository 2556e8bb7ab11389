#!/usr/bin/env bash
# Installs what is missing, builds, and runs the seed article's worked example
# (fenced); the report lands in out/worked-example-fenced/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cmake -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target fencesim
build/fencesim run scenarios/worked-example-fenced.json
