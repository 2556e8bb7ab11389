"""A Python resource program for tests/models/program/program_check_test.cpp,
in the mode named by argv[1] (run by python3 -m fencesim):
  sleep   sleeps inside a check (refused: a check takes no time)
  blank   returns a rejection whose reason is only spaces (refused by the SDK)
  twice   registers a second check (refused)
  big     a mark of 2**64 (refused by the SDK)
"""
import sys
import time

import fencesim

MODE = sys.argv[1]

if MODE == "twice":
    fencesim.check(lambda request, state: fencesim.accept())


@fencesim.check
def check(request, state):
    if MODE == "sleep":
        time.sleep(0.1)
    if MODE == "blank":
        return {"accepted": False, "reason": "   "}
    if MODE == "big":
        return fencesim.accept(marks={"n": 2**64})
    return fencesim.accept()
