#!/usr/bin/python3
"""real/zk-lock/zk_lock.py — fencesim-real's ZooKeeper client helper: kazoo's
real Lock recipe (kazoo/recipe/lock.py, Debian 12's python3-kazoo) driven by
a line protocol on stdin/stdout, one helper process per client incarnation
(as real/etcd-lock is for etcd).

  zk_lock.py --hosts H1,H2,... --timeout SECONDS --path /lock --policy P
      prints "ready" once connected; then, per line on stdin:
        acquire  -> "granted <node path> <czxid>"   (blocks until held)
        release  -> "released"                      (or "release-failed <why>")
      and, unasked, "session-ended <state>" when the connection state ends
      the holder's belief under the policy (clients[].connection_policy):
      standard: SUSPENDED or LOST; session: LOST; none: never.
  zk_lock.py --hosts H --path /lock --observe
      prints "ready", then "deleted <node path>" for every lock node that
      goes (a release, or its session's expiry).

Hosts are tried in the order given (kazoo shuffles them unless told not
to: randomize_hosts=False keeps the model's order, client k on zk-(k mod n)
first).
"""
import argparse
import sys
import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

OUT = threading.Lock()


def say(line):
    with OUT:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def lock_loop(args):
    client = KazooClient(hosts=args.hosts, timeout=args.timeout, randomize_hosts=False)
    holding = threading.Event()

    def listener(state):
        ends = {"standard": (KazooState.SUSPENDED, KazooState.LOST), "session": (KazooState.LOST,), "none": ()}
        if holding.is_set() and state in ends[args.policy]:
            holding.clear()
            say("session-ended " + str(state))

    client.add_listener(listener)
    client.start(timeout=30)
    lock = client.Lock(args.path)  # one uuid per Lock object, as the model's client incarnation
    say("ready")
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "acquire":
            lock.acquire()
            path = args.path + "/" + lock.node
            stat = None
            while stat is None:
                try:
                    stat = client.exists(path)
                    break
                except Exception:  # a connection loss: ask again
                    continue
            holding.set()
            say("granted %s %d" % (path, stat.czxid if stat else 0))
        elif cmd == "release":
            holding.clear()
            try:
                lock.release()
                say("released")
            except Exception as e:  # the session went: its node went with it
                say("release-failed " + type(e).__name__)
        elif cmd == "quit":
            break
    client.stop()


def observe(args):
    client = KazooClient(hosts=args.hosts, timeout=10.0, randomize_hosts=False)
    client.start(timeout=30)
    client.ensure_path(args.path)
    known = set()

    def on_children(children):
        now = set(children)
        for gone in sorted(known - now):
            say("deleted %s/%s" % (args.path, gone))
        known.clear()
        known.update(now)
        return True

    client.ChildrenWatch(args.path, on_children)
    say("ready")
    for line in sys.stdin:
        if line.strip() == "quit":
            break
    client.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hosts", required=True)
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--path", required=True)
    p.add_argument("--policy", choices=["standard", "session", "none"], default="standard")
    p.add_argument("--observe", action="store_true")
    args = p.parse_args()
    if args.observe:
        observe(args)
    else:
        lock_loop(args)


if __name__ == "__main__":
    main()
