#!/usr/bin/env python3
"""The program-client scenarios of scenarios/programs/ (issue 31), in the
golden tier:

  check STEM       `fencesim run` exits 0 (its expect block met), twice,
                   and the two reports are byte-identical (same seed, same
                   run, with Python program clients)
  fails STEM CODE  `fencesim run` exits CODE, writes no report, and says
                   which client and why on one message
  sweep STEM       a sweep of 20 seeds gives the same sweep.json with
                   --jobs 1 and --jobs 2 (warm processes per worker), and
                   its seed 13 the fingerprint of a cold `run --seed 13`
  story STEM TEXT  its report.md says TEXT (a counterexample's story names
                   the program's own calls)
  readme -         the 20-line client of sdk/python/README.md runs as two
                   program clients, one paused past the TTL: no_lost_update
                   is violated, as its text says
"""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile


def run(fencesim, src, stem, out, extra=()):
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:" + env.get("PATH", "")  # Debian's python3, which has python3-redis
    quiet = ["--quiet"] if extra[0] == "run" else []
    return subprocess.run([fencesim, extra[0], os.path.join(src, "scenarios", "programs", stem + ".json"),
                           *extra[1:], "--out", out, *quiet], env=env, capture_output=True, text=True, timeout=600)


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(same_tree(os.path.join(a, d), os.path.join(b, d)) for d in cmp.common_dirs)


def readme(a, t):
    text = open(os.path.join(a.source_dir, "sdk", "python", "README.md")).read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    if len(code.strip().splitlines()) > 20:
        sys.exit("the README's client has more than 20 lines")
    with open(os.path.join(t, "client.py"), "w") as f:
        f.write(code)
    program = {"command": ["python3", "-m", "fencesim", "client.py"],
               "env": {"PYTHONPATH": os.path.join(a.source_dir, "sdk", "python")}}
    scenario = {"version": 1, "scenario": "readme-client", "duration": "30s", "settle": "5s",
                "network": {"latency": "1ms"}, "lock": {"service": "redis", "ttl": "10s", "replicas": 0,
                                                        "sentinels": 0},
                "resource": {"kind": "unfenced", "initial": 0},
                "clients": [{"name": "A", "program": program}, {"name": "B", "start": "1s", "program": program}],
                "faults": [{"at": "100ms", "kind": "pause", "target": "A", "duration": "12s"}],
                "expect": {"mutual_exclusion": "violated", "no_lost_update": "violated"}}
    run_readme_scenario(a, t, scenario, "the README's client")


def run_readme_scenario(a, d, scenario, what):
    """Runs `scenario` (saved as d/readme.json) with Debian's python3 first
    on PATH; exits naming `what` unless its expect block is met."""
    import json
    with open(os.path.join(d, "readme.json"), "w") as f:
        json.dump(scenario, f)
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:" + env.get("PATH", "")
    r = subprocess.run([a.fencesim, "run", os.path.join(d, "readme.json"), "--out", os.path.join(d, "out"),
                        "--quiet"], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("%s: exit %d\n%s%s" % (what, r.returncode, r.stdout, r.stderr))


def readme_clients(a, t):
    """README.md "The same client in Python and in Node": each block at most
    30 lines, each run as two clients (A paused) with the verdicts its
    story has."""
    import json
    text = open(os.path.join(a.source_dir, "README.md")).read()
    section = text.split("### The same client in Python and in Node", 1)[1].split("\n### ", 1)[0]
    node_path = os.path.join(a.source_dir, "scenarios", "programs", "node", "redlock", "node_modules")
    cases = [
        ("python", "client.py", {"command": ["python3", "-m", "fencesim", "client.py"],
                                 "env": {"PYTHONPATH": os.path.join(a.source_dir, "sdk", "python")}},
         "12s", {"mutual_exclusion": "violated", "no_lost_update": "violated"}),
        ("js", "client.js", {"command": ["node", os.path.join(a.source_dir, "sdk", "node", "run.js"), "client.js"],
                             "env": {"NODE_PATH": node_path}},
         "3s", {"mutual_exclusion": "violated", "no_stale_write": "violated", "no_lost_update": "violated"}),
    ]
    for lang, name, program, pause, expect in cases:
        code = section.split("```%s\n" % lang, 1)[1].split("```", 1)[0]
        if len(code.strip().splitlines()) > 30:
            sys.exit("README.md's %s client has more than 30 lines" % lang)
        sdk = "python" if lang == "python" else "node"
        sdk_text = open(os.path.join(a.source_dir, "sdk", sdk, "README.md")).read()
        if sdk_text.split("```%s\n" % lang, 1)[1].split("```", 1)[0] != code:
            sys.exit("README.md's %s client and sdk/%s/README.md's differ: keep them the same" % (lang, sdk))
        d = os.path.join(t, lang)
        os.makedirs(d)
        with open(os.path.join(d, name), "w") as f:
            f.write(code)
        scenario = {"version": 1, "scenario": "readme-" + lang, "duration": "30s", "settle": "5s",
                    "network": {"latency": "1ms"},
                    "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
                    "resource": {"kind": "unfenced", "initial": 0},
                    "clients": [{"name": "A", "program": program}, {"name": "B", "start": "1s", "program": program}],
                    "faults": [{"at": "100ms", "kind": "pause", "target": "A", "duration": pause}],
                    "expect": expect}
        run_readme_scenario(a, d, scenario, "README.md's %s client" % lang)


def matrix(a, one, two):
    """scenarios/matrices/STEM.json twice: the same MATRIX.json; and each
    program row (a name with "program") counts what the built-in row it
    mirrors counts (the row named in the program row's "mirrors" table
    below), cell by cell."""
    import json
    mirrors = {"S3 If-Match (Node program)": "cas (built-in)",
               "per-row tokens (Python program)": "fenced strict (built-in)"}
    path = os.path.join(a.source_dir, "scenarios", "matrices", a.stem + ".json")
    for out in (one, two):
        r = subprocess.run([a.fencesim, "matrix", path, "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("%s: matrix exit %d\n%s" % (a.stem, r.returncode, r.stderr))
    if not filecmp.cmp(os.path.join(one, "MATRIX.json"), os.path.join(two, "MATRIX.json"), False):
        sys.exit("%s: two matrix runs wrote different MATRIX.json" % a.stem)
    rows = {row["name"]: row["cells"] for row in json.load(open(os.path.join(one, "MATRIX.json")))["rows"]}
    counts = lambda cells: [{k: v and v["violations"] for k, v in c["properties"].items()} for c in cells]
    for program, builtin in mirrors.items():
        if counts(rows[program]) != counts(rows[builtin]):
            sys.exit("%s: %s counted %s, %s %s" % (a.stem, program, counts(rows[program]), builtin,
                                                   counts(rows[builtin])))


def need_redis_py():
    """The programs use Debian's python3-redis: without it the tier skips
    (exit 77) in a developer build and fails under .ci/run."""
    if subprocess.run(["/usr/bin/python3", "-c", "import redis"], capture_output=True).returncode == 0:
        return
    print("SKIP: the golden tier needs python3-redis for the program clients (tools/deps.sh --test)")
    sys.exit(1 if os.environ.get("FENCESIM_REQUIRE_TOOLS") else 77)


def need_node(source_dir, stem, what):
    """The Node programs (scenarios/programs/node-*.json, a scenario or
    matrix whose command is node, README.md's Node client) need node and the
    npm packages tools/node-deps.sh installs: without them the test skips
    (exit 77) in a developer build and fails under .ci/run."""
    if what == "readme":
        return
    if what != "readme-clients" and not stem.startswith("node-"):
        scenario = os.path.join(source_dir, "scenarios", "programs", stem + ".json")
        if not os.path.exists(scenario):
            scenario = os.path.join(source_dir, "scenarios", "matrices", stem + ".json")
        if '["node"' not in open(scenario).read():
            return
    import glob
    import shutil
    folders = [os.path.join(source_dir, "sdk", "node")] + glob.glob(
        os.path.join(source_dir, "scenarios", "programs", "node", "*", ""))
    missing = [f for f in folders if not os.path.isdir(os.path.join(f, "node_modules"))]
    if shutil.which("node") and not missing:
        return
    print("SKIP: the golden tier needs node and the npm packages of %s (tools/node-deps.sh)" %
          (", ".join(os.path.relpath(f, source_dir) for f in missing) or "sdk/node"))
    sys.exit(1 if os.environ.get("FENCESIM_REQUIRE_TOOLS") else 77)


def main():
    need_redis_py()
    p = argparse.ArgumentParser()
    p.add_argument("--fencesim", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("what", choices=["check", "fails", "sweep", "readme", "readme-clients", "story", "matrix"])
    p.add_argument("stem")
    p.add_argument("code", nargs="?")
    a = p.parse_args()
    need_node(a.source_dir, a.stem, a.what)
    with tempfile.TemporaryDirectory() as t:
        one, two = os.path.join(t, "1"), os.path.join(t, "2")
        if a.what == "check":
            for out in (one, two):
                r = run(a.fencesim, a.source_dir, a.stem, out, ["run"])
                if r.returncode != 0:
                    sys.exit("%s: exit %d\n%s%s" % (a.stem, r.returncode, r.stdout, r.stderr))
            if not same_tree(one, two):
                sys.exit("%s: two runs of the same seed wrote different reports" % a.stem)
        elif a.what == "fails":
            r = run(a.fencesim, a.source_dir, a.stem, one, ["run"])
            if r.returncode != int(a.code):
                sys.exit("%s: exit %d, expected %s\n%s" % (a.stem, r.returncode, a.code, r.stderr))
            if os.path.exists(one) and os.listdir(one):
                sys.exit("%s: a report was written for a run that stopped" % a.stem)
            lines = [l for l in r.stderr.splitlines() if l.startswith("fencesim:")]
            if len(lines) != 1 or "client A:" not in lines[0]:
                sys.exit("%s: expected one message naming client A, got:\n%s" % (a.stem, r.stderr))
        elif a.what == "matrix":
            matrix(a, one, two)
        elif a.what == "readme":
            readme(a, t)
        elif a.what == "readme-clients":
            readme_clients(a, t)
        elif a.what == "story":
            r = run(a.fencesim, a.source_dir, a.stem, one, ["run"])
            report = open(os.path.join(one, os.listdir(one)[0], "report.md")).read()
            if a.code not in report:
                sys.exit("%s: the report does not say %r" % (a.stem, a.code))
        else:
            for out, jobs in ((one, "1"), (two, "2")):
                r = run(a.fencesim, a.source_dir, a.stem, out, ["sweep", "--seeds", "1..20", "--jobs", jobs])
                if r.returncode not in (0, 1):
                    sys.exit("%s: sweep exit %d\n%s" % (a.stem, r.returncode, r.stderr))
            for d in os.listdir(one):
                if not filecmp.cmp(os.path.join(one, d, "sweep.json"), os.path.join(two, d, "sweep.json"), False):
                    sys.exit("%s: --jobs 1 and --jobs 2 gave different sweep.json" % a.stem)
                # A warm process (seed 13, after 12 runs in it) gives the run a
                # fresh process gives: the cold run of the same seed.
                import json
                runs = json.load(open(os.path.join(one, d, "sweep.json")))["runs"]
                warm = [r["fingerprint"] for r in runs if r["seed"] == 13]
                cold_dir = os.path.join(t, "cold")
                r = run(a.fencesim, a.source_dir, a.stem, cold_dir, ["run", "--seed", "13"])
                cold = json.load(open(os.path.join(cold_dir, os.listdir(cold_dir)[0], "report.json")))
                if warm != [cold["run"]["fingerprint"]]:
                    sys.exit("%s: seed 13 warm %s, cold %s" % (a.stem, warm, cold["run"]["fingerprint"]))
    print("ok")


main()
