"""Two ways to break the protocol (docs/PROTOCOL.md "Errors"), for the
scenarios bad-protocol.json and never-yields.json:

    python3 -m fencesim bad_client.py garbage    # prints to fencesim's stdout behind the SDK's back
    python3 -m fencesim bad_client.py hang       # computes for ever: never yields
"""
import os
import sys

if sys.argv[1] == "garbage":
    # The SDK moved print() to stderr; writing to the protocol's own pipe
    # (here fd 1 was re-pointed, so reach it the way a careless library
    # might: the original stdout the SDK keeps) is what breaks the run.
    import fencesim._state as state
    state.channel()._out.write("Lock acquired!\n")
    state.channel()._out.flush()
    import time
    time.sleep(1)
else:
    while True:
        pass
