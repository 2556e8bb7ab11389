"""The Python SDK's etcd Watch (sdk/python/fencesim: etcd_watch, prefix_end):
a watch of a prefix on a follower that times out on simulated time, sees a
spawned task's writes, and stops at its cancel. Run by
tests/models/program/program_client_test.cpp."""
import time

import fencesim

out = []


def writer():
    time.sleep(1)
    fencesim.etcd("Put", key="job/1", value="a")
    fencesim.etcd("Txn", success=[{"request_put": {"key": "job/2", "value": "b"}},
                                  {"request_delete_range": {"key": "job/1"}}])
    time.sleep(1)
    fencesim.etcd("Put", key="job/3", value="after the cancel")


fencesim.spawn(writer, "writer")
w = fencesim.etcd_watch("job/", fencesim.prefix_end("job/"), node="etcd-2")
t0 = fencesim.now()["monotonic"]
out.append("nothing in 0.5s: %s at %d ms" % (w.next(timeout=0.5), (fencesim.now()["monotonic"] - t0) // 10**6))
for _ in range(2):
    events = w.next(timeout=5)
    out.append(" ".join("%s %s@%d" % (e["type"], e["kv"]["key"], e["kv"]["mod_revision"]) for e in events))
w.cancel()
time.sleep(3)
out.append("prefix_end %r %r" % (fencesim.prefix_end("job/"), fencesim.prefix_end("\xff")))
fencesim.note(" | ".join(out))
