"""The watchdog pattern (Redisson's lock watchdog, redsync's extend loop)
written by hand: a renewal task beside the work extends the lease every
third of its TTL, and the work checks, before it writes, that the lease
was confirmed less than a TTL ago — the check a paused holder needs
(on_lease_loss done by user code). Uses redis-py's Lock (extend is its Lua
script) and fencesim.spawn for the renewal task.

    python3 -m fencesim watchdog_client.py
"""
import time

import fencesim
from redis.exceptions import LockError

me = fencesim.client()
TTL = me["lock"]["ttl"] / 1e9
r = fencesim.redis()
lock = fencesim.tracked(r.lock(me["lock"]["key"], timeout=TTL, blocking_timeout=60))
state = {"confirmed": None, "lost": False, "done": False}


def watchdog():
    while not state["done"] and not state["lost"]:
        time.sleep(TTL / 3)
        if state["done"]:
            return
        sent = time.monotonic()
        try:
            lock.reacquire()  # PEXPIRE back to the full TTL if we still own it
            state["confirmed"] = sent
        except LockError as e:
            state["lost"] = True  # tracked() has told fencesim: belief lost
            fencesim.note("watchdog: reacquire failed (%s): stop" % type(e).__name__)


fencesim.iteration_start()
if lock.acquire():
    state["confirmed"] = time.monotonic()
    fencesim.iteration_acquired()
    fencesim.spawn(watchdog, "watchdog")
    value = fencesim.resource.read()["value"]
    time.sleep(1.0)  # the work
    age = time.monotonic() - state["confirmed"]
    if state["lost"] or age >= TTL:
        # The lease may be gone: do not write (on_lease_loss "abort").
        if not state["lost"]:
            fencesim.lost("lease not confirmed for %.1fs (TTL %.0fs): stop before writing" % (age, TTL))
            state["lost"] = True
        fencesim.note("work: the lease is not safe, no write")
        fencesim.iteration_end(False, "stopped before writing: lease lost")
    else:
        done = fencesim.resource.write(value + 1, read_value=value)
        state["done"] = True
        try:
            lock.release()
        except LockError:
            pass
        fencesim.iteration_end(done["accepted"])
else:
    fencesim.iteration_end(False, "not acquired")
state["done"] = True
