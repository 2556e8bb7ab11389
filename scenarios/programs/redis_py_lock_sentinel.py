"""redis-py's own ``redis.lock.Lock``, unchanged, on a Redis primary found
through Sentinel (``fencesim.redis_sentinel()``: SENTINEL
get-master-addr-by-name, asked again after a timeout or a READONLY answer),
guarding an unfenced read-modify-write. While the primary is down the
lock's commands time out; the client waits and tries again, as services
written on redis-py do.

    python3 -m fencesim redis_py_lock_sentinel.py WORK_SECONDS
"""
import sys
import time

import fencesim
from redis.exceptions import ConnectionError, LockNotOwnedError, TimeoutError

r = fencesim.redis_sentinel(socket_timeout=1)
lock = fencesim.tracked(r.lock(fencesim.client()["lock"]["key"], timeout=20, blocking_timeout=30))
work = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


def acquire():
    while True:
        try:
            return lock.acquire()
        except (ConnectionError, TimeoutError) as e:
            fencesim.note("acquire: %s; asking the sentinels again in 0.5 s" % type(e).__name__)
            time.sleep(0.5)


fencesim.iteration_start()
if acquire():
    fencesim.iteration_acquired()
    value = fencesim.resource.read()["value"]
    time.sleep(work)  # the work between the read and the write
    done = fencesim.resource.write(value + 1, read_value=value)
    try:
        lock.release()
    except (LockNotOwnedError, ConnectionError, TimeoutError):
        pass  # the lock is gone (tracked() noted it)
    fencesim.iteration_end(done["accepted"])
else:
    fencesim.iteration_end(False, "not acquired")
