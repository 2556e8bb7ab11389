"""client-go's concurrency.Session and concurrency.Mutex (etcd v3.5,
client/v3/concurrency/session.go and mutex.go), written by hand in Python
over fencesim's etcd requests: a lease kept alive by a task beside the work,
the Mutex's transaction, waitDeletes, and the final check of its own key.
The fencing token is the key's create revision.

    python3 -m fencesim etcd_mutex.py ITERATIONS
"""
import sys
import time

import fencesim

me = fencesim.client()
TTL = max(1, me["lock"]["ttl"] // 1_000_000_000)
PREFIX = me["lock"]["key"] + "/"
session = {"lease": None, "done": False}


def keepalive():
    # session.go: client-go's KeepAlive sends a request every TTL/3.
    while not session["done"]:
        time.sleep(TTL / 3)
        if session["done"]:
            return
        r = fencesim.etcd("LeaseKeepAlive", ID=session["lease"])
        if r.get("TTL", 0) <= 0:
            session["done"] = True
            fencesim.lost("session ended: the lease's keepalive found it expired")
            return


def lock():
    """mutex.go Lock: tryAcquire, then waitDeletes, then the v3.5 re-check."""
    my_key = PREFIX + "%x" % session["lease"]
    r = fencesim.etcd("MutexTxn", key=my_key, prefix=PREFIX, lease=session["lease"])
    my_rev = r["kvs"][0]["create_revision"]
    if r["owner"]["create_revision"] != my_rev:
        while True:  # waitDeletes(ctx, client, pfx, myRev-1)
            last = fencesim.etcd("RangeLastCreated", prefix=PREFIX, max_create_revision=my_rev - 1)
            if not last["kvs"]:
                break
            fencesim.request("etcd", method="WatchDelete", key=last["kvs"][0]["key"],
                             start_revision=last["header"]["revision"])
        check = fencesim.etcd("Range", key=my_key, mutex_check=True)
        if not check["kvs"]:
            raise RuntimeError("ErrSessionExpired")
    return my_key, my_rev


grant = fencesim.etcd("LeaseGrant", TTL=TTL)
session["lease"] = grant["ID"]
fencesim.spawn(keepalive, "keepalive")
iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1
for n in range(iterations):
    fencesim.iteration_start()
    key, token = lock()
    fencesim.held("%s@%d" % (key, token), token)
    fencesim.iteration_acquired()
    value = fencesim.resource.read()["value"]
    time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.5)  # the work
    done = fencesim.resource.write(value + 1, token=token, read_value=value)
    fencesim.released()
    fencesim.etcd("DeleteRange", key=key)  # Unlock
    fencesim.iteration_end(done["accepted"], "ok" if done["accepted"] else "write rejected: " + done["reason"])
    if n + 1 < iterations:
        time.sleep(1)
session["done"] = True
