"""A hand-rolled etcd lock of the kind many services write instead of
client-go's Mutex, on etcd's general v3 API: a lease kept alive by a task
beside the work; one Txn that creates the lock key with the lease if it is
absent (its create revision is 0) and reads it back; a Watch of the key to
wait for its deletion; and a release that deletes the key only while it
still holds our value. The fencing token is the key's create revision.

    python3 -m fencesim etcd_txn_lock.py ITERATIONS WORK_SECONDS
"""
import sys
import time

import fencesim

me = fencesim.client()
KEY = me["lock"]["key"]
TTL = max(1, me["lock"]["ttl"] // 1_000_000_000)
session = {"lease": None, "done": False}


def keepalive():
    # As client-go's KeepAlive: a keepalive every TTL/3.
    while not session["done"]:
        time.sleep(TTL / 3)
        if session["done"]:
            return
        if fencesim.etcd("LeaseKeepAlive", ID=session["lease"]).get("TTL", 0) <= 0:
            session["done"] = True
            fencesim.lost("the lease's keepalive found it expired")
            return


def acquire():
    """Txn(If(CreateRevision(KEY) == 0), Then(Put(KEY, me, lease), Get(KEY)),
    Else(Get(KEY))); while someone else holds it, wait for its deletion."""
    value = "%s-%x" % (me["client"], session["lease"])
    while True:
        r = fencesim.etcd(
            "Txn",
            compare=[{"key": KEY, "target": "CREATE", "result": "EQUAL", "create_revision": 0}],
            success=[{"request_put": {"key": KEY, "value": value, "lease": session["lease"]}},
                     {"request_range": {"key": KEY}}],
            failure=[{"request_range": {"key": KEY}}])
        kvs = r["responses"][-1]["response_range"]["kvs"]
        if r["succeeded"]:
            return value, kvs[0]["create_revision"]
        if not kvs:
            continue
        with fencesim.etcd_watch(KEY, start_revision=r["header"]["revision"] + 1) as w:
            while not any(e["type"] == "DELETE" for e in w.next()):
                pass


def release(value):
    """Deletes the key only while it holds our value."""
    r = fencesim.etcd("Txn", compare=[{"key": KEY, "target": "VALUE", "result": "EQUAL", "value": value}],
                      success=[{"request_delete_range": {"key": KEY}}])
    if not r["succeeded"]:
        fencesim.note("release: the lock key no longer holds %s" % value)


session["lease"] = fencesim.etcd("LeaseGrant", TTL=TTL)["ID"]
fencesim.spawn(keepalive, "keepalive")
iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1
work = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
for n in range(iterations):
    fencesim.iteration_start()
    value, token = acquire()
    fencesim.held("%s@%d" % (KEY, token), token)
    fencesim.iteration_acquired()
    current = fencesim.resource.read(token=token)["value"]
    time.sleep(work)
    done = fencesim.resource.write(current + 1, token=token, read_value=current)
    fencesim.released()
    release(value)
    fencesim.iteration_end(done["accepted"], "ok" if done["accepted"] else "write rejected: " + done["reason"])
    if n + 1 < iterations:
        time.sleep(1)
session["done"] = True
