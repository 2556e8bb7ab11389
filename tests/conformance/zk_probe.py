#!/usr/bin/python3
"""Probes a real ZooKeeper server with kazoo (Debian's python3-kazoo) for
tests/conformance/zookeeper_conformance_test.cpp, and prints one JSON
object on stdout.

  zk_probe.py --port P basics
      negotiated: the session timeout the server negotiated (its `cons`
        four-letter command's to=) for asked 1 s, 10 s and 60 s, in ms;
      names: the sequence suffixes of three EPHEMERAL_SEQUENTIAL children of
        /p, then (after deleting the second) of a fourth;
      czxid_steps: each of those nodes' czxid minus the first's (the delete
        between the third and the fourth takes a zxid too);
      parent_cversion, children: /p's Stat.cversion and child count.
  zk_probe.py --port P expiry --timeout-ms T
      a child process opens a session of T ms and creates the ephemeral
      /e; once it is there the child is stopped (SIGSTOP, a paused
      process); stopped_to_deleted_ms: from the SIGSTOP to the NodeDeleted
      event another session sees.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from kazoo.client import KazooClient


def four_letter(port, cmd):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(cmd.encode())
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
    s.close()
    return out.decode()


def negotiated(port, asked_s):
    c = KazooClient(hosts="127.0.0.1:%d" % port, timeout=asked_s)
    c.start(timeout=15)
    sid = c.client_id[0]
    line = [l for l in four_letter(port, "cons").splitlines() if ("sid=0x%x" % sid) in l]
    c.stop()
    c.close()
    return int(re.search(r"to=(\d+)", line[0]).group(1))


def basics(port):
    out = {"negotiated": [negotiated(port, t) for t in (1.0, 10.0, 60.0)]}
    c = KazooClient(hosts="127.0.0.1:%d" % port, timeout=10.0)
    c.start(timeout=15)
    c.ensure_path("/p")
    names = [c.create("/p/n-", ephemeral=True, sequence=True) for _ in range(3)]
    czxids = [c.exists(n).czxid for n in names]
    c.delete(names[1])
    names.append(c.create("/p/n-", ephemeral=True, sequence=True))
    czxids.append(c.exists(names[3]).czxid)
    out["names"] = [n[-10:] for n in names]
    out["czxid_steps"] = [z - czxids[0] for z in czxids]
    st = c.exists("/p")
    out["parent_cversion"] = st.cversion
    out["children"] = st.numChildren
    c.stop()
    c.close()
    return out


CHILD = """
import sys, time
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=float(sys.argv[2]) / 1000.0)
c.start(timeout=15)
c.create('/e', ephemeral=True)
print('ready', flush=True)
while True:
    time.sleep(1)
"""


def expiry(port, timeout_ms):
    hosts = "127.0.0.1:%d" % port
    child = subprocess.Popen([sys.executable, "-c", CHILD, hosts, str(timeout_ms)], stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the child did not create /e")
        w = KazooClient(hosts=hosts, timeout=30.0)
        w.start(timeout=15)
        deleted = threading.Event()
        if w.exists("/e", watch=lambda ev: deleted.set()) is None:
            raise RuntimeError("/e is missing")
        stopped = time.monotonic()
        os.kill(child.pid, signal.SIGSTOP)
        if not deleted.wait(timeout_ms / 1000.0 * 5 + 30):
            raise RuntimeError("/e was not deleted")
        ms = int((time.monotonic() - stopped) * 1000)
        w.stop()
        w.close()
        return {"stopped_to_deleted_ms": ms}
    finally:
        child.kill()
        child.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--timeout-ms", type=int, default=4000)
    ap.add_argument("mode", choices=["basics", "expiry"])
    a = ap.parse_args()
    out = basics(a.port) if a.mode == "basics" else expiry(a.port, a.timeout_ms)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
