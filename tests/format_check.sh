#!/usr/bin/env bash
# Every C++ file of the project follows .clang-format (exit 77, skipped, when
# clang-format is not installed).
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f (clang-format -i $f)"; bad=1; fi
done < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find . -name '*.cpp' -o -name '*.hpp' -not -path './build*')
exit $bad
