#!/usr/bin/env python3
"""A resource program written against docs/PROTOCOL.md "Resource programs"
with no SDK: tests/models/program/program_check_test.cpp runs it in the
modes below (argv[1]). Standard library only.

  echo        rejects every write, its reason the check as it came (the
              request, the copy's state and clocks), and keeps a mark
              "n" counting the checks; accepts every read
  bad-marks   a decision whose marks are not integers
  no-decision a yield without the decision
  chatty      a note before the decision
  hang        never answers the first check
  exit        exits (status 0) at the first check
  unicode     rejects every write with a reason in UTF-8 with a newline
  long-reason rejects every write with a reason of 3,000 "é" (6,000 bytes)
  huge-mark   a mark of 2^64-1, above the 64-bit signed range
  huge-seen   a last_seen of 2^63, above the 64-bit signed range
  no-reason   rejects a write without a reason
  not-bool    a decision whose "accepted" is 1
  stderr-bytes writes bytes that are not UTF-8 to stderr, then as echo
  huge-float  a decision with a mark of 1e400 (beyond a double)
  odd-name    a mark named "a=1"
  blank       rejects a write with a reason of a bidi override and spaces
  exit-after-end  says reuse, and exits with status 1 at end
"""
import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "echo"


def send(m):
    sys.stdout.write(json.dumps(m, sort_keys=True) + "\n")
    sys.stdout.flush()


def recv():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


send({"type": "hello", "protocol": 1, "sdk": "raw_check", "reuse": MODE == "exit-after-end"})
if MODE == "stderr-bytes":
    sys.stderr.flush()
    sys.stderr.buffer.write(b"bad \xff byte \xc3\n")
    sys.stderr.flush()
init = recv()
assert init["type"] == "init" and init["role"] == "check", init
sys.stderr.write("init %s locks %s copies %s\n" % (init["client"], init["lock"]["keys"], init["resource"]["copies"]))
send({"type": "yield"})
while True:
    m = recv()
    if m["type"] == "end":
        sys.exit(1 if MODE == "exit-after-end" else 0)
    assert m["type"] == "check", m
    if MODE == "hang":
        while True:
            pass
    if MODE == "exit":
        sys.exit(0)
    if MODE == "chatty":
        send({"type": "note", "text": "hello"})
    n = m["state"]["marks"].get("n", 0) + 1
    d = {"type": "decision", "id": m["id"], "accepted": m["request"]["op"] == "read", "marks": {"n": n},
         "last_seen": n}
    if MODE == "echo" and m["request"]["op"] == "write":
        d["reason"] = json.dumps({k: m[k] for k in ("copy", "time", "request", "state")}, sort_keys=True)
    if MODE == "unicode" and m["request"]["op"] == "write":
        d["reason"] = "412 pr\u00e9condition \u2713\nno"
    if MODE == "long-reason" and m["request"]["op"] == "write":
        d["reason"] = "\u00e9" * 3000
    if MODE == "bad-marks":
        d["marks"] = {"n": "one"}
    if MODE == "huge-mark":
        d["marks"] = {"n": 18446744073709551615}
    if MODE == "huge-seen":
        d["last_seen"] = 9223372036854775808
    if MODE == "not-bool":
        d["accepted"] = 1
    if MODE == "odd-name":
        d["marks"] = {"a=1": 1}
    if MODE == "blank" and m["request"]["op"] == "write":
        d["reason"] = "\u202e \u00a0"
    if MODE == "huge-float":
        sys.stdout.write('{"type": "decision", "id": %d, "accepted": true, "marks": {"n": 1e400}}\n' % m["id"])
        sys.stdout.flush()
        d = None
    if d is not None and not d["accepted"] and "reason" not in d and MODE != "no-reason":
        d["reason"] = "rejected"
    if MODE != "no-decision" and d is not None:
        send(d)
    send({"type": "yield"})
