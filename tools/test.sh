#!/usr/bin/env bash
# Installs what the tests need, builds everything and runs the whole suite:
# every tier (unit, golden, browser, conformance, realstack; tests/CMakeLists.txt).
# After the install, a tier whose programs are still missing fails with one
# line naming the Debian package (FENCESIM_REQUIRE_TOOLS=1) instead of
# skipping as it does in a plain developer build.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --test
tools/node-deps.sh
cmake -B build
cmake --build build -j"$(nproc)"
export FENCESIM_REQUIRE_TOOLS=1
# As many computing tests at a time as cores, and beside them at most one
# real-stack comparison of each lane, which mostly waits on real time
# (tests/CMakeLists.txt "A core each").
cores=$(nproc)
printf '{"version": {"major": 1, "minor": 0}, "local": [{"cpus": [{"id": "0", "slots": %d}]}]}\n' "$cores" >build/cpus.json
ctest --test-dir build --output-on-failure -j"$((cores + 2))" --resource-spec-file "$PWD/build/cpus.json"
