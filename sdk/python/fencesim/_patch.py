"""Time, sleep and randomness from the simulation (PROTOCOL.md "Lockstep",
rule 3), patched into the standard library while a program runs there.

* time.time/time_ns/monotonic/monotonic_ns/perf_counter(_ns): the client's
  clocks as the current delivery carries them (time stands still until the
  task waits for something);
* time.sleep: a ``timer`` request, the task waits for it;
* os.urandom (and so secrets, random.SystemRandom, uuid4), uuid.uuid1 and
  uuid4, the random module's functions: the client's own stream, seeded by
  ``init.seed``. redis-py's Lock draws its token with uuid1 (redis/lock.py).
"""
import os
import random
import time
import uuid

_state = {"channel": None, "rng": random.Random(0)}
_originals = {}


def _ns(clock):
    return _state["channel"].time[clock]


def _sleep(seconds):
    ch = _state["channel"]
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    ch.request({"type": "timer", "after": int(round(seconds * 1e9))})


def _urandom(n):
    return _state["rng"].randbytes(n)


def _uuid1(node=None, clock_seq=None):
    return uuid.UUID(int=_state["rng"].getrandbits(128), version=1)


def _uuid4():
    return uuid.UUID(int=_state["rng"].getrandbits(128), version=4)


_PATCHES = {
    (time, "time"): lambda: _ns("wall") / 1e9,
    (time, "time_ns"): lambda: _ns("wall"),
    (time, "monotonic"): lambda: _ns("monotonic") / 1e9,
    (time, "monotonic_ns"): lambda: _ns("monotonic"),
    (time, "perf_counter"): lambda: _ns("monotonic") / 1e9,
    (time, "perf_counter_ns"): lambda: _ns("monotonic"),
    (time, "sleep"): _sleep,
    (os, "urandom"): _urandom,
    (uuid, "uuid1"): _uuid1,
    (uuid, "uuid4"): _uuid4,
}


def install(channel, seed_hex):
    """Patches the modules for a run with this client's stream."""
    _state["channel"] = channel
    seed = int(seed_hex, 16)
    _state["rng"] = random.Random(seed)
    random.seed(seed ^ 0x5DEECE66D)  # the module's own generator, its own stream
    for (mod, name), fn in _PATCHES.items():
        _originals.setdefault((mod, name), getattr(mod, name))
        setattr(mod, name, fn)


def uninstall():
    for (mod, name), fn in _originals.items():
        setattr(mod, name, fn)


def rng():
    """The client's random stream (random.Random)."""
    return _state["rng"]
