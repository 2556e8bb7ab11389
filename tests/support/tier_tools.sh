# tests/support/tier_tools.sh — sourced by the shell tests of a tier that
# needs programs (the browser tier: chromium, node, npm).
#   need_program TIER PROGRAM PACKAGE
# returns when PROGRAM is on PATH; otherwise prints one line naming it and its
# Debian package and exits: 1 under tools/test.sh (FENCESIM_REQUIRE_TOOLS=1,
# set after it installed everything, so a gap in the install step fails CI),
# 77 (CTest "skipped") in a plain developer build.
need_program() {
  command -v "$2" >/dev/null 2>&1 && return 0
  if [ "${FENCESIM_REQUIRE_TOOLS:-}" = 1 ]; then
    echo "FAIL: the $1 tier needs $2 (Debian package $3): tools/deps.sh --test installs it"
    exit 1
  fi
  echo "SKIP: the $1 tier needs $2 (Debian package $3): tools/deps.sh --test installs it"
  exit 77
}
