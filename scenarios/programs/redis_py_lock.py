"""redis-py's own ``redis.lock.Lock``, unchanged, guarding an unfenced
read-modify-write of the resource. Beliefs come from ``fencesim.tracked``,
which wraps the lock's acquire and release and names redis-py's calls on
the timeline and in the counterexamples' stories.

    python3 -m fencesim redis_py_lock.py
"""
import time

import fencesim
from redis.exceptions import LockNotOwnedError

r = fencesim.redis()
# redis-py 4.3: Lock(redis, name, timeout=10 s, sleep=0.1 s, blocking_timeout=30 s):
# SET name token NX PX 10000, retried every 100 ms; release and extend are Lua scripts.
lock = fencesim.tracked(r.lock(fencesim.client()["lock"]["key"], timeout=10, blocking_timeout=30))

fencesim.iteration_start()
if lock.acquire():
    fencesim.iteration_acquired()
    value = fencesim.resource.read()["value"]
    time.sleep(0.5)  # the work between the read and the write
    done = fencesim.resource.write(value + 1, read_value=value)
    try:
        lock.release()
    except LockNotOwnedError:
        pass  # the lock had expired and was taken: tracked() noted it
    fencesim.iteration_end(done["accepted"])
else:
    fencesim.iteration_end(False, "not acquired")
