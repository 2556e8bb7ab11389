"""The Python SDK's fencesim.redis_sentinel(): redis-py on the primary the
sentinels name, found again after a failover. Writes a key once a second
and notes which node answered (or what went wrong). Run by
tests/models/program/program_client_test.cpp."""
import time

import fencesim

r = fencesim.redis_sentinel(socket_timeout=0.5)
seen = []
for i in range(12):
    try:
        r.set("k", str(i))
        conns = r.connection_pool._available_connections
        seen.append("%d:%s" % (i, conns[0].node if conns else "?"))
    except Exception as e:  # the primary is down: redis-py's own exceptions
        seen.append("%d:%s" % (i, type(e).__name__))
    time.sleep(1)
fencesim.note(" ".join(seen))
fencesim.note("sentinel_name %s" % fencesim.client()["lock"]["sentinel_name"])
