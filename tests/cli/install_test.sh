#!/usr/bin/env bash
# Installs fencesim into a temporary prefix and builds and runs the example
# project of examples/ against it with find_package(fencesim).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/example" -j2 >/dev/null
"$work/example/lock_design_test"
"$work/example/per_row_test"
"$work/example/renewal_policy_test"
