"""The seed article's client, as a program of your own (Python, fencesim's
SDK and redis-py): it acquires with the article's Lua script — SET NX PX
and INCR of the token counter in one atomic step — reads the allocator's
counter, works, writes with its fencing token and releases.

    python3 -m fencesim seed_client.py ITERATIONS
"""
import sys
import time
import uuid

import fencesim

ACQUIRE = ("if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
           "return redis.call('INCR', KEYS[2]) end return false")
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

me = fencesim.client()
lock = me["lock"]
r = fencesim.redis()
acquire = r.register_script(ACQUIRE)
release = r.register_script(RELEASE)
iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1

for n in range(iterations):
    fencesim.iteration_start()
    value = uuid.uuid4().hex  # from this client's random stream
    token = acquire(keys=[lock["key"], lock["counter_key"]], args=[value, lock["ttl"] // 1_000_000])
    while token is None:  # SET NX failed: someone holds the lock
        time.sleep(0.1)
        token = acquire(keys=[lock["key"], lock["counter_key"]], args=[value, lock["ttl"] // 1_000_000])
    fencesim.held(value, token)
    fencesim.iteration_acquired()
    counter = fencesim.resource.read()["value"]  # the next block starts here
    time.sleep(0.5)                               # the work
    done = fencesim.resource.write(counter + 100, token=token, read_value=counter)
    fencesim.released()
    release(keys=[lock["key"]], args=[value])
    fencesim.iteration_end(done["accepted"], "ok" if done["accepted"] else "write rejected: " + done["reason"])
    if n + 1 < iterations:
        time.sleep(4)  # think
