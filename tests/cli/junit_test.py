#!/usr/bin/env python3
"""`--junit FILE` of `fencesim run`, `sweep` and `matrix` (issue #35): JUnit
XML that CI systems read — a test case per scenario, per property, per cell;
escaped (a file name with & < > ' " in the reproduce command parses back
whole); written atomically (no temporary file left); the same bytes twice."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def fencesim(binary, *args):
    return subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def suite(path):
    root = ET.parse(path).getroot()
    check(root.tag == "testsuites", "%s: root is <testsuites>" % path)
    s = root.find("testsuite")
    cases = s.findall("testcase")
    for kind in ("failure", "error", "skipped"):
        n = sum(1 for c in cases if c.find(kind) is not None)
        attr = kind if kind != "failure" else "failures"
        attr = "errors" if kind == "error" else attr
        check(int(s.get(attr)) == n, "%s: %s=%s counts the cases (%d)" % (path, attr, s.get(attr), n))
    check(int(s.get("tests")) == len(cases), "%s: tests= counts the cases" % path)
    return s, cases


def no_temporaries(folder):
    left = [f for f in os.listdir(folder) if ".tmp" in f]
    check(not left, "no temporary file left in %s: %s" % (folder, left))


def unmet_copy(scenarios, tmp):
    """The unfenced worked example expecting no_stale_write to hold: one unmet expectation."""
    with open(os.path.join(scenarios, "worked-example-unfenced.json"), encoding="utf-8") as f:
        text = f.read()
    text = text.replace('"scenario": "worked-example-unfenced"', '"scenario": "unmet-example"')
    text = text.replace('"no_stale_write": "violated"', '"no_stale_write": "holds"')
    path = os.path.join(tmp, "bad & <it's \"odd\">.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def test_run(binary, scenarios, tmp):
    good = os.path.join(scenarios, "worked-example-unfenced.json")
    bad = unmet_copy(scenarios, tmp)
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w", encoding="utf-8") as f:
        f.write("{ not json")
    junit = os.path.join(tmp, "ci", "run.xml")  # the folder does not exist yet
    r = fencesim(binary, "run", "-q", good, bad, broken, "--out", os.path.join(tmp, "out"), "--junit", junit)
    check(r.returncode == 2, "run with a broken file exits 2 (got %d)" % r.returncode)
    s, cases = suite(junit)
    names = [c.get("name") for c in cases]
    # Files that do not load are found (and listed) first, then each run in order.
    check(names == [broken, "worked-example-unfenced", "unmet-example"], "run: a case per file: %s" % names)
    cases = cases[1:] + cases[:1]
    check(cases[0].find("failure") is None and "every expectation met" in cases[0].findtext("system-out"),
          "run: the met scenario passes")
    failure = cases[1].find("failure")
    check(failure is not None and "no_stale_write: expected holds, got violated" in (failure.text or ""),
          "run: the failure names the unmet expectation")
    check(failure is not None and os.path.basename(bad) in (failure.text or "").replace("'\\''", "'"),
          "run: the reproduce command keeps the file name's & < > ' \" through XML escaping")
    check(cases[2].find("error") is not None, "run: a file that does not load is an <error>")
    no_temporaries(os.path.dirname(junit))
    first = open(junit, "rb").read()
    fencesim(binary, "run", "-q", good, bad, broken, "--out", os.path.join(tmp, "out"), "--junit", junit)
    check(open(junit, "rb").read() == first, "run: the same JUnit bytes twice")


def test_sweep(binary, scenarios, tmp):
    bad = unmet_copy(scenarios, tmp)
    junit = os.path.join(tmp, "sweep.xml")
    r = fencesim(binary, "sweep", bad, "--seeds", "1..3", "--keep", "none", "--out", os.path.join(tmp, "sw"),
                 "--junit", junit)
    check(r.returncode == 1, "sweep with an unmet expectation exits 1 (got %d)" % r.returncode)
    s, cases = suite(junit)
    by_name = {c.get("name"): c for c in cases}
    check("mutual_exclusion" in by_name and "no_stale_write" in by_name, "sweep: a case per property")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    check(failed == ["no_stale_write"], "sweep: only no_stale_write fails: %s" % failed)
    msg = by_name["no_stale_write"].find("failure").get("message")
    check(re.search(r"3 runs did not meet it", msg) is not None, "sweep: the failure counts the runs: %s" % msg)
    no_temporaries(tmp)


def test_matrix(binary, matrix, tmp):
    junit = os.path.join(tmp, "matrix.xml")
    r = fencesim(binary, "matrix", matrix, "--seeds", "2", "-q", "--out", os.path.join(tmp, "mx"), "--junit", junit)
    check(r.returncode == 0, "matrix exits 0 (got %d: %s)" % (r.returncode, r.stderr))
    s, cases = suite(junit)
    check(len(cases) == 4, "matrix: a case per cell (%d)" % len(cases))
    skipped = [(c.get("classname"), c.get("name")) for c in cases if c.find("skipped") is not None]
    check(skipped == [("fencesim.matrix.small.redis-single", "partition")], "matrix: the n/a cell is skipped")
    out = cases[0].findtext("system-out") or ""
    check("mutual_exclusion: violated in 2 of 2 runs" in out, "matrix: a cell's rates in <system-out>: %s" % out)


def test_bad_junit_path(binary, scenarios, tmp):
    """A --junit FILE that cannot be written is refused before anything runs
    (it once ran the whole sweep, wrote its folder, then failed naming a
    temporary file): exit 2, one line naming --junit, no report folder."""
    blocker = os.path.join(tmp, "a-file")
    with open(blocker, "w") as f:
        f.write("x")
    fenced = os.path.join(scenarios, "worked-example-fenced.json")
    for label, junit in (("a folder", tmp), ("under a file", os.path.join(blocker, "j.xml"))):
        for cmd in (["run", fenced], ["sweep", fenced, "--seeds", "1..3"]):
            out = os.path.join(tmp, "out-" + cmd[0])
            r = fencesim(binary, *cmd, "--out", out, "--junit", junit)
            what = "%s --junit %s" % (cmd[0], label)
            check(r.returncode == 2, "%s exits 2 (got %d)" % (what, r.returncode))
            lines = r.stderr.strip().splitlines()
            check(len(lines) == 1 and "--junit" in lines[0] and ".tmp" not in lines[0],
                  "%s: one line naming --junit and not a temporary file: %r" % (what, r.stderr))
            check(not os.path.exists(out), "%s: nothing ran (no %s)" % (what, out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fencesim", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    scenarios = os.path.join(a.source_dir, "scenarios")
    with tempfile.TemporaryDirectory() as tmp:
        test_run(a.fencesim, scenarios, tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_sweep(a.fencesim, scenarios, tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_bad_junit_path(a.fencesim, scenarios, tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_matrix(a.fencesim, os.path.join(a.source_dir, "tests", "explore", "matrix", "small.json"), tmp)
    print("%d passed, %d failed" % (0 if FAILURES else 1, 1 if FAILURES else 0))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
