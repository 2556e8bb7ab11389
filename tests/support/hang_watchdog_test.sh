#!/usr/bin/env bash
# The hang watchdog (tests/support/hang_watchdog.hpp) turns a hung test into
# an abort that names the test and shows the processes and, with gdb, the
# stack of the hung thread.
#   hang_watchdog_test.sh SELFTEST_BINARY
set -uo pipefail
out=$("$1" 2>&1)
rc=$?
fail() {
  echo "FAIL: $1"
  echo "--- the self-test's output:"
  echo "$out"
  exit 1
}
[ "$rc" -ne 0 ] || fail "the hung test exited 0 (rc $rc)"
grep -q "HANG: HangWatchdogSelf.OutlivesItsLimit is still running after 1 s" <<<"$out" || fail "no HANG line naming the test"
grep -q "WCHAN" <<<"$out" || fail "no process table (ps)"
if command -v gdb >/dev/null; then
  grep -q "hang_here" <<<"$out" || fail "gdb is installed but no stack names hang_here()"
else
  grep -q "gdb is not installed" <<<"$out" || fail "without gdb, no line saying so"
fi
echo "ok: the hung test aborted after 1 s with its processes and stacks"
