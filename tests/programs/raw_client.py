#!/usr/bin/env python3
"""A program client written against docs/PROTOCOL.md with no SDK: the
tests of models/program/ (tests/models/program_client_test.cpp) run it in
the modes below (argv[1]). Standard library only."""
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "rmw"


def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


def recv():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def call(m):
    """Sends one request, yields, and returns the delivery that answers it."""
    send(m)
    send({"type": "yield"})
    return recv()


def rmw(init, hold):
    """Read-modify-write of the resource; with `hold`, believes it holds the
    lock around it (no lock service is asked: the beliefs are the test's)."""
    send({"type": "iteration", "event": "start"})
    if hold:
        send({"type": "held", "value": init["client"] + "-v", "token": None})
    r = call({"type": "resource", "id": 1, "op": "read"})
    v = r["result"]["value"]
    call({"type": "timer", "id": 2, "after": 500_000_000})
    w = call({"type": "resource", "id": 3, "op": "write", "value": v + 1, "read_value": v})
    if hold:
        send({"type": "released"})
    send({"type": "iteration", "event": "end", "success": w["result"]["accepted"]})
    send({"type": "note", "text": "wrote %d at %d" % (v + 1, w["time"]["monotonic"])})


SEED_ACQUIRE = ("if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
                "return redis.call('INCR', KEYS[2]) end return false")
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


def seed(init, iterations):
    """The seed article's client: acquire with the SET NX PX + INCR script,
    read, work 500 ms, write with the token, release; `iterations` times."""
    ids = iter(range(1, 1_000_000))
    lock = init["lock"]
    for n in range(iterations):
        value = "%s-%d" % (init["client"], n)
        send({"type": "iteration", "event": "start"})
        while True:
            r = call({"type": "redis", "id": next(ids),
                      "args": ["EVAL", SEED_ACQUIRE, 2, lock["key"], lock["counter_key"], value,
                               lock["ttl"] // 1_000_000]})
            if "result" in r and isinstance(r["result"], int):
                break
            call({"type": "timer", "id": next(ids), "after": 100_000_000})
        token = r["result"]
        send({"type": "held", "value": value, "token": token})
        send({"type": "iteration", "event": "acquired"})
        rd = call({"type": "resource", "id": next(ids), "op": "read", "token": token})
        v = rd["result"]["value"]
        call({"type": "timer", "id": next(ids), "after": 500_000_000})
        w = call({"type": "resource", "id": next(ids), "op": "write", "value": v + 100, "read_value": v,
                  "token": token})
        ok = "result" in w and w["result"]["accepted"]
        send({"type": "released"})
        call({"type": "redis", "id": next(ids), "args": ["EVAL", RELEASE, 1, lock["key"], value]})
        send({"type": "iteration", "event": "end", "success": ok,
              "outcome": "ok" if ok else "write rejected"})
        if n + 1 < iterations:
            call({"type": "timer", "id": next(ids), "after": 4_000_000_000})


def etcd_txn():
    """The general etcd API: Txn with compares, Range with a range end and
    a limit, DeleteRange over a range, Watch of a prefix on a follower."""
    ids = iter(range(1, 1000))
    out = []
    watched = []

    def etcd(**fields):
        rid = next(ids)
        send(dict({"type": "etcd", "id": rid}, **fields))
        send({"type": "yield"})
        while True:
            d = recv()
            if d["type"] == "watch":
                watched.append(" ".join("%s:%s@%d" % (e["type"], e["kv"]["key"], e["kv"]["mod_revision"])
                                        for e in d["events"]))
                send({"type": "yield"})
                continue
            return d["result"]

    def kvs(res):
        return ",".join("%s=%s@%d/%d/v%d" % (kv["key"], kv["value"], kv["create_revision"], kv["mod_revision"],
                                             kv["version"]) for kv in res["kvs"])

    def cmp(key, target, result, **value):
        return dict({"key": key, "target": target, "result": result}, **value)

    etcd(method="Put", key="k1", value="v1")
    r = etcd(method="Txn", compare=[cmp("k1", "CREATE", "EQUAL", create_revision=0)],
             success=[{"request_put": {"key": "k1", "value": "mine"}}],
             failure=[{"request_range": {"key": "k1"}}])
    out.append("taken:%s %s" % (r["succeeded"], kvs(r["responses"][0]["response_range"])))
    r = etcd(method="Txn", compare=[cmp("k1", "VALUE", "EQUAL", value="v1"), cmp("k1", "MOD", "LESS", mod_revision=3)],
             success=[{"request_put": {"key": "k1", "value": "v2"}}, {"request_put": {"key": "k2", "value": "x"}},
                      {"request_range": {"key": "k", "range_end": "l"}}])
    out.append("cas:%s rev %d %s" % (r["succeeded"], r["header"]["revision"],
                                     kvs(r["responses"][2]["response_range"])))
    r = etcd(method="Txn", compare=[cmp("nokey", "VALUE", "EQUAL", value="")])
    out.append("value-of-missing:%s" % r["succeeded"])
    r = etcd(method="Txn", compare=[cmp("nokey", "VERSION", "EQUAL", version=0),
                                    cmp("k", "VERSION", "GREATER", version=0, range_end="l")])
    out.append("version-of-missing:%s rev %d" % (r["succeeded"], r["header"]["revision"]))
    r = etcd(method="Txn", success=[{"request_put": {"key": "d", "value": "1"}},
                                    {"request_put": {"key": "d", "value": "2"}}])
    out.append(r["error"])
    r = etcd(method="Txn", success=[{"request_put": {"key": "d", "value": "1", "lease": 999}}])
    out.append(r["error"])
    # A watch of the prefix "k" on a follower, replaying from revision 1.
    send({"type": "etcd", "id": 500, "method": "Watch", "key": "k", "range_end": "l", "start_revision": 1,
          "node": "etcd-1"})
    r = etcd(method="Range", key="", range_end="\u0000", limit=1)
    out.append("limit:%s count %d more %s" % (kvs(r), r["count"], r["more"]))
    r = etcd(method="DeleteRange", key="k", range_end="l")
    out.append("deleted:%d rev %d" % (r["deleted"], r["header"]["revision"]))
    etcd(method="Range", key="k1")  # time for the watch's events
    send({"type": "cancel", "id": 500})
    etcd(method="Put", key="k3", value="after the cancel")
    etcd(method="Range", key="k3")
    send({"type": "note", "text": " | ".join(out)})
    send({"type": "note", "text": " | ".join(watched)})


def main():
    reuse = MODE == "reuse"
    if MODE == "no-hello":
        send({"type": "yield"})
        recv()
        return
    send({"type": "hello", "protocol": 1, "sdk": "raw", "reuse": reuse})
    while True:
        init = recv()
        sys.stderr.write("pid %d init %s restarts %d\n" % (os.getpid(), init["client"], init["restarts"]))
        if MODE in ("rmw", "reuse"):
            rmw(init, hold=False)
        elif MODE == "hold":
            rmw(init, hold=True)
        elif MODE == "seed":
            seed(init, 1 if init["client"] == "A" else 3)
        elif MODE == "tx":
            ids = iter(range(1, 1000))
            out = []

            def redis(*args):
                r = call({"type": "redis", "id": next(ids), "args": list(args)})
                out.append(r["result"])
            if init["client"] == "A":
                redis("WATCH", "k")
                call({"type": "timer", "id": next(ids), "after": 200_000_000})
                redis("MULTI"); redis("SET", "k", "A"); redis("INCR", "c"); redis("EXEC")  # noqa: E702
                redis("MULTI"); redis("SET", "k", "A2"); redis("INCR", "c"); redis("EXEC")  # noqa: E702
                redis("MULTI"); redis("NOSUCH"); redis("EXEC")  # noqa: E702
                redis("EXEC"); redis("GET", "k"); redis("GET", "c")  # noqa: E702
            else:
                redis("SET", "k", "B")
            send({"type": "note", "text": json.dumps(out, separators=(",", ":"))})
        elif MODE == "wait":
            ids = iter(range(1, 1000))
            out = []

            def redis(*args):
                r = call({"type": "redis", "id": next(ids), "args": list(args), "timeout": 0})
                out.append([r["result"], r["time"]["monotonic"] // 1_000_000])
            redis("WAIT", 2, 1000)      # no write yet: every connected replica, at once
            redis("SET", "k", "v")
            redis("WAIT", 2, 1000)      # both replicas acknowledge after the replication delay
            call({"type": "timer", "id": next(ids), "after": 1_000_000_000})  # redis-2 is cut off at 1s
            redis("SET", "k", "w")
            redis("WAIT", 2, 500)       # one replica only: answered at the timeout
            redis("WAIT", 1, 0)         # enough already
            redis("WAIT", "x", 0)
            out.append(call({"type": "redis", "id": next(ids), "node": "redis-1", "args": ["WAIT", 1, 0]})["result"])
            send({"type": "note", "text": json.dumps(out, separators=(",", ":"))})
        elif MODE == "cluster":
            ids = iter(range(1, 1000))
            out = []
            for node in init["nodes"]["redis"]:
                for args in (["SET", "k", "v"], ["EVAL", "return 1", 2, "a", "b"],
                             ["EVAL", SEED_ACQUIRE, 2, "{t}l", "{t}c", "v", 10000], ["SCRIPT", "LOAD", "return 1"]):
                    r = call({"type": "redis", "id": next(ids), "node": node, "args": args})
                    res = r["result"]
                    out.append(res["error"].split(" ")[0] if isinstance(res, dict) and "error" in res else "ok")
            send({"type": "note", "text": " ".join(out)})
        elif MODE == "ttl":
            ids = iter(range(1, 1000))
            out = []

            def etcd(**fields):
                r = call(dict({"type": "etcd", "id": next(ids)}, **fields))
                res = r["result"]
                out.append("%s:%s/%s%s" % (fields["method"], res.get("TTL"), res.get("grantedTTL"),
                                           " " + res["error"] if "error" in res else ""))
                return res
            lease = etcd(method="LeaseGrant", TTL=5)["ID"]
            call({"type": "timer", "id": next(ids), "after": 2_000_000_000})
            etcd(method="LeaseTimeToLive", ID=lease)
            etcd(method="LeaseTimeToLive", ID=lease, node="etcd-2")
            for k in ("p/b", "p/a", "q/c", "p/c"):
                call({"type": "etcd", "id": next(ids), "method": "Put", "key": k, "value": k.upper(), "lease": lease})
            for limit in (0, 2):
                res = call({"type": "etcd", "id": next(ids), "method": "RangePrefix", "prefix": "p/",
                            "limit": limit})["result"]
                out.append("RangePrefix:" + ",".join("%s=%s@%d" % (kv["key"], kv["value"], kv["create_revision"])
                                                     for kv in res["kvs"]))
            call({"type": "timer", "id": next(ids), "after": 4_000_000_000})
            etcd(method="LeaseTimeToLive", ID=lease)
            etcd(method="LeaseTimeToLive", ID=12345)
            send({"type": "note", "text": " ".join(out)})
        elif MODE == "etcd-txn":
            etcd_txn()
        elif MODE == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        elif MODE == "unknown":
            send({"type": "sned", "id": 1})
        elif MODE == "dup-id":
            send({"type": "timer", "id": 4, "after": 1})
            send({"type": "timer", "id": 4, "after": 2})
        elif MODE == "huge-id":
            send({"type": "timer", "id": 18446744073709551615, "after": 1})
        elif MODE == "huge-after":
            send({"type": "timer", "id": 1, "after": 9223372036854775808})
        elif MODE == "bad-node":
            send({"type": "resource", "id": 1, "op": "read", "node": "nowhere"})
        elif MODE == "never-yield":
            sys.stdin.readline()  # waits for ever: fencesim must give up
        elif MODE == "bad-txn":
            # The second success operation's put has no key.
            send({"type": "etcd", "id": 1, "method": "Txn",
                  "success": [{"request_range": {"key": "k"}}, {"request_put": {"value": "v"}}]})
        elif MODE == "bad-utf8":
            sys.stdout.buffer.write(b'{"type": "note", "text": "caf\xe9"}\n')
            sys.stdout.flush()
        elif MODE == "exit0-init":
            # Finished at once: exits with status 0 without a yield.
            sys.exit(0)
        elif MODE == "exit0-later":
            # Reads, then exits with status 0 while its timer is pending.
            call({"type": "resource", "id": 1, "op": "read"})
            send({"type": "timer", "id": 2, "after": 500_000_000})
            sys.exit(0)
        elif MODE == "close-stdout":
            # Closes its stdout and keeps running: neither finished nor
            # yielding.
            os.close(1)
            sys.stdin.readline()
        elif MODE == "die":
            sys.stderr.write("boom: the program failed on purpose\n")
            sys.exit(7)
        elif MODE == "clock":
            # Reports the clocks of the deliveries of three timers, one of
            # them at a wall-clock reading.
            a = call({"type": "timer", "id": 1, "after": 1_000_000_000})
            b = call({"type": "timer", "id": 2, "at": a["time"]["wall"] + 2_000_000_000, "clock": "wall"})
            send({"type": "timer", "id": 3, "after": 5_000_000_000})
            send({"type": "cancel", "id": 3})
            send({"type": "now", "id": 4})  # answered at once, before any yield
            n = recv()
            send({"type": "note", "text": "a %d/%d b %d/%d" % (a["time"]["monotonic"], a["time"]["wall"],
                                                             b["time"]["monotonic"], b["time"]["wall"])})
            send({"type": "note", "text": "now %d" % n["time"]["monotonic"]})
        elif MODE == "crash":
            send({"type": "held", "value": "%s-%d" % (init["client"], init["restarts"]), "token": None})
            call({"type": "timer", "id": 1, "after": 3_000_000_000})
            send({"type": "released"})
            send({"type": "note", "text": "done after %d restarts" % init["restarts"]})
        send({"type": "yield"})
        end = recv()
        if end["type"] != "end":
            sys.stderr.write("unexpected %s\n" % json.dumps(end))
            sys.exit(3)
        if not reuse:
            return
        send({"type": "ready"})


main()
