#!/usr/bin/env python3
"""Runs every command of docs/TUTORIAL.md and checks what the text says it gives.

The tutorial's commands are its fenced code blocks whose info string starts
with `sh` (a block whose info string also says `no-test`, such as the build
step, is not run). Each block runs as one bash script (`bash -e -o pipefail`),
in the order of the file, from a scratch folder that looks like the repository
root to it: `build/fencesim` is the fencesim under test, and `scenarios/`,
`docs/` and `tools/` are the source tree's. The tutorial's output folder,
/tmp/fencesim-tutorial, is replaced by a folder of this test's own, so that
two runs of the test never share files.

Inside a block, comment lines state what the block must give:

    # → exit N        the script's exit code (without one: 0)
    # → TEXT          TEXT appears in its output (stdout and stderr),
                      comparing with runs of blanks collapsed to one space
    # → not: TEXT     TEXT does not appear

Every image the tutorial shows (`![...](tutorial/NAME.png)`) must exist.
Exit 0 when every block gives what it states, 1 otherwise (with the block's
line, what differed and its output).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

OUT = "/tmp/fencesim-tutorial"


def blocks(text):
    """(line number of the opening fence, info string, body) of each fenced block."""
    found = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i + 1, m.group(1).strip(), []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        found.append((start, info, "\n".join(body)))
        i += 1
    return found


def squash(s):
    return re.sub(r"\s+", " ", s).strip()


def expectations(body):
    code, present, absent = 0, [], []
    for line in body.split("\n"):
        m = re.match(r"^\s*#\s*→\s*(.*?)\s*$", line)
        if not m:
            continue
        what = m.group(1)
        e = re.match(r"^exit (\d+)$", what)
        if e:
            code = int(e.group(1))
        elif what.startswith("not: "):
            absent.append(what[len("not: "):])
        else:
            present.append(what)
    return code, present, absent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fencesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--tutorial", default="docs/TUTORIAL.md")
    a = ap.parse_args()
    src = os.path.abspath(a.source_dir)
    path = os.path.join(src, a.tutorial)
    with open(path, encoding="utf-8") as f:
        text = f.read()

    failures = []
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text):
        if not os.path.isfile(os.path.join(os.path.dirname(path), image)):
            failures.append(f"{a.tutorial}: the image {image} does not exist")

    work = tempfile.mkdtemp(prefix="fencesim-tutorial-test-")
    try:
        os.makedirs(os.path.join(work, "build"))
        os.symlink(os.path.abspath(a.fencesim), os.path.join(work, "build", "fencesim"))
        for d in ("scenarios", "docs", "tools"):
            os.symlink(os.path.join(src, d), os.path.join(work, d))
        out = os.path.join(work, "out")
        env = dict(os.environ, NO_COLOR="1")
        ran = 0
        for line, info, body in blocks(text):
            words = info.split()
            if not words or words[0] != "sh" or "no-test" in words:
                continue
            ran += 1
            code, present, absent = expectations(body)
            script = body.replace(OUT, out)
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            output = p.stdout.decode("utf-8", "replace")
            flat = squash(output)
            problems = []
            if p.returncode != code:
                problems.append(f"exit code {p.returncode}, the text says {code}")
            for t in present:
                if squash(t) not in flat:
                    problems.append(f"the output lacks: {t}")
            for t in absent:
                if squash(t) in flat:
                    problems.append(f"the output has: {t}")
            status = "ok" if not problems else "FAILED"
            print(f"{a.tutorial}:{line}: {status} (exit {p.returncode}; {len(present) + len(absent)} output checks)")
            if problems:
                failures.append(f"{a.tutorial}:{line}: " + "; ".join(problems) + "\n--- the block:\n" + body +
                                "\n--- its output:\n" + output)
        if ran == 0:
            failures.append(f"{a.tutorial}: no sh block to run")
        print(f"{ran} command blocks run")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
