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
# One real stack at a time beside the other tiers (tests/real/CMakeLists.txt).
ctest --test-dir build --output-on-failure -j"$(nproc)" --resource-spec-file "$PWD/tests/real/one-real-stack.json"
