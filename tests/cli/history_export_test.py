#!/usr/bin/env python3
"""`fencesim run --history edn,porcupine` (issue #35, "Histories for outside checkers").

Runs the worked example unfenced (known bad) and fenced (known good) and
checks that history.edn (Jepsen's op maps) and history.json (Porcupine's
Operations) are well formed, byte-identical for the same seed, and judged
right by an independent checker.

The checker is this file's own: neither Debian nor npm packages a
linearizability checker that reads these files (npm has no "linearizability"
or "knossos" package, and its "porcupine" is an unrelated tool; Knossos and
Porcupine themselves are a Clojure and a Go library). It is the brute-force
search of Wing & Gong (1993) over the small history, against the sequential
models of knossos.model (knossos 0.3.x src/knossos/model.clj): `mutex`
(:acquire when free, :release when held) and `cas-register` (:read returns
the value, :cas [old new] needs the value to be old). An :ok op takes effect
once between its call and return; a :fail op never; an :info op at any time
after its call, or never.

Expected verdicts: the register history of the unfenced run is NOT
linearizable (A's write from a stale read, 1000 -> 1100, lands after B's
1000 -> 1100), the fenced one is (A's write was refused: :fail). The mutex
history is not linearizable in either (A and B both believed they held the
lock: mutual_exclusion is violated in both reports). client-crash-restart
(A crashes holding the lock: its release is :info, and its ops after the
restart are another process) is linearizable as both.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


# ---- EDN: the subset history.edn uses (maps of keywords, nil, integers,
# strings and vectors of integers), one map per line.
TOKEN = re.compile(r'\s*(?:(\{)|(\})|(\[)|(\])|(,)|(:[A-Za-z_\-?!]+)|(nil)|(-?\d+)|"((?:[^"\\]|\\.)*)")')


def parse_edn_map(line):
    pos, items, stack = 0, [], []
    while pos < len(line):
        m = TOKEN.match(line, pos)
        if not m:
            if line[pos:].strip() == "":
                break
            raise ValueError("cannot parse EDN at %r" % line[pos:])
        pos = m.end()
        ob, cb, ov, cv, comma, kw, nil, num, s = m.groups()
        if ob or ov:
            stack.append(items)
            items = []
        elif cb:
            flat, items = items, stack.pop()
            if len(flat) % 2:
                raise ValueError("odd map in %r" % line)
            items.append(dict(zip(flat[0::2], flat[1::2])))
        elif cv:
            vec, items = items, stack.pop()
            items.append(tuple(vec))
        elif comma:
            continue
        elif kw:
            items.append(kw)
        elif nil:
            items.append(None)
        elif num:
            items.append(int(num))
        else:
            items.append(s.encode().decode("unicode_escape"))
    if stack or len(items) != 1 or not isinstance(items[0], dict):
        raise ValueError("not one map: %r" % line)
    return items[0]


def read_edn(path):
    ops = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(";") or not line.strip():
                continue
            ops.append(parse_edn_map(line))
    return ops


def edn_operations(ops, name):
    """Pairs invocations with completions (Jepsen's rules): checks the shape."""
    open_by_process, pairs, last_time = {}, [], -1
    for i, op in enumerate(ops):
        for key in (":type", ":f", ":value", ":process", ":time", ":index"):
            check(key in op, "%s: op %d has %s" % (name, i, key))
        check(op[":index"] == i, "%s: :index %d is %d" % (name, i, op[":index"]))
        check(op[":time"] >= last_time, "%s: :time goes back at %d" % (name, i))
        last_time = op[":time"]
        check(op[":type"] in (":invoke", ":ok", ":fail", ":info"), "%s: :type of %d" % (name, i))
        check(op[":f"] in (":acquire", ":release", ":read", ":cas"), "%s: :f of %d" % (name, i))
        p = op[":process"]
        if op[":type"] == ":invoke":
            check(p not in open_by_process, "%s: process %s invokes twice (op %d)" % (name, p, i))
            open_by_process[p] = op
        else:
            inv = open_by_process.pop(p, None)
            check(inv is not None and inv[":f"] == op[":f"], "%s: completion %d matches no invocation" % (name, i))
            if inv is not None:
                pairs.append((inv, op))
    return pairs


def edn_to_ops(pairs, fs):
    out = []
    for inv, done in pairs:
        if inv[":f"] not in fs or done[":type"] == ":fail":
            continue
        info = done[":type"] == ":info"
        out.append({"f": inv[":f"][1:], "value": done[":value"], "call": inv[":time"],
                    "ret": math.inf if info else done[":time"], "optional": info})
    return out


def porcupine_to_ops(doc):
    out = []
    for o in doc["operations"]:
        if not o["output"]["ok"]:
            continue  # refused: no effect
        inp = o["input"]
        value = o["output"]["value"] if inp["op"] == "read" else (inp["from"], inp["to"])
        out.append({"f": inp["op"], "value": value, "call": o["call"], "ret": o["return"], "optional": False})
    return out


def step(model, state, op):
    """knossos.model's step: the new state, or None when inconsistent."""
    f, v = op["f"], op["value"]
    if model == "mutex":
        if f == "acquire":
            return None if state else True
        return False if state else None
    if f == "read":
        return state if v is None or v == state else None
    if f == "cas":
        return v[1] if state == v[0] else None
    return v  # write


def linearizable(model, init, ops):
    """Wing & Gong: some order of the ops, each inside its interval, that the model accepts."""
    n, seen = len(ops), set()

    def search(done, state):
        if (done, state) in seen:
            return False
        seen.add((done, state))
        rest = [i for i in range(n) if not done >> i & 1]
        if all(ops[i]["optional"] for i in rest):
            return True
        horizon = min(ops[i]["ret"] for i in rest)
        for i in rest:
            if ops[i]["call"] > horizon:
                continue  # something else must return before this one is called
            nxt = step(model, state, ops[i])
            if nxt is not None and search(done | 1 << i, nxt):
                return True
            if ops[i]["optional"] and search(done | 1 << i, state):
                return True  # an :info op that never took effect
        return False

    return search(0, init)


def run(fencesim, scenario, out):
    subprocess.run([fencesim, "run", "-q", scenario, "--out", out, "--history", "edn,porcupine"], check=True,
                   stdout=subprocess.DEVNULL)
    name = os.path.splitext(os.path.basename(scenario))[0]
    return os.path.join(out, name)


def self_test():
    """The checker itself can fail: a hand-made bad history and a good one."""
    good = [{"f": "cas", "value": (0, 1), "call": 0, "ret": 2, "optional": False},
            {"f": "read", "value": 1, "call": 1, "ret": 3, "optional": False}]
    bad = [{"f": "cas", "value": (0, 1), "call": 0, "ret": 1, "optional": False},
           {"f": "cas", "value": (0, 1), "call": 2, "ret": 3, "optional": False}]
    check(linearizable("register", 0, good), "self-test: a good register history is linearizable")
    check(not linearizable("register", 0, bad), "self-test: two cas 0->1 in sequence are not")
    lock = [{"f": "acquire", "value": None, "call": 0, "ret": 1, "optional": False},
            {"f": "release", "value": None, "call": 5, "ret": math.inf, "optional": True},
            {"f": "acquire", "value": None, "call": 6, "ret": 7, "optional": False}]
    check(linearizable("mutex", False, lock), "self-test: an :info release lets the next acquire in")
    check(not linearizable("mutex", False, [lock[0], lock[2]]), "self-test: two acquires without a release")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fencesim", required=True)
    ap.add_argument("--scenarios", required=True)
    a = ap.parse_args()
    self_test()
    with tempfile.TemporaryDirectory() as tmp:
        cases = (("worked-example-unfenced", False, False), ("worked-example-fenced", True, False),
                 ("client-crash-restart", True, True))
        for name, register_ok, mutex_ok in cases:
            scenario = os.path.join(a.scenarios, name + ".json")
            d1 = run(a.fencesim, scenario, os.path.join(tmp, "one"))
            d2 = run(a.fencesim, scenario, os.path.join(tmp, "two"))
            for f in ("history.edn", "history.json"):
                with open(os.path.join(d1, f), "rb") as x, open(os.path.join(d2, f), "rb") as y:
                    check(x.read() == y.read(), "%s/%s is byte-identical for the same seed" % (name, f))
            check(not [f for f in os.listdir(d1) if ".tmp" in f], "%s: no temporary file is left" % name)
            pairs = edn_operations(read_edn(os.path.join(d1, "history.edn")), name)
            check(len(pairs) > 0, "%s: history.edn has operations" % name)
            with open(os.path.join(d1, "history.json"), encoding="utf-8") as f:
                doc = json.load(f)
            initial = doc["initial"]
            check(doc["model"] == "cas-register" and isinstance(initial, int), "%s: history.json's model" % name)
            for o in doc["operations"]:
                check(set(o) >= {"client_id", "input", "call", "output", "return"} and o["call"] <= o["return"],
                      "%s: a Porcupine operation's shape: %r" % (name, o))
            reg_edn = edn_to_ops(pairs, (":read", ":cas"))
            reg_json = porcupine_to_ops(doc)
            check(len(reg_edn) == len(reg_json), "%s: the two files hold the same register ops" % name)
            check(linearizable("register", initial, reg_edn) == register_ok,
                  "%s: register history (EDN) linearizable is %s" % (name, register_ok))
            check(linearizable("register", initial, reg_json) == register_ok,
                  "%s: register history (Porcupine) linearizable is %s" % (name, register_ok))
            mutex = edn_to_ops(pairs, (":acquire", ":release"))
            check(linearizable("mutex", False, mutex) == mutex_ok,
                  "%s: mutex history linearizable is %s" % (name, mutex_ok))
    print("%d passed, %d failed" % (0 if FAILURES else 1, 1 if FAILURES else 0))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
