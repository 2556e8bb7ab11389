#!/usr/bin/python3
"""The golden table: every shipped scenario's behaviour in one row.

tests/golden/GOLDEN.tsv holds, per file in scenarios/ (by its file name
without .json): the seed, the run's fingerprint and event count, every
verdict (with the instant of its first counterexample) and every metric of
report.json. A run whose row differs has changed behaviour: review the
difference, and if it is intended, regenerate the table (tools/regen-reports.sh)
in a commit of its own whose message says why.

  golden.py --fencesim BIN --source-dir DIR check STEM...
      runs each scenarios/STEM.json once with `fencesim run --quiet`; fails
      when the run does not exit 0 (its `expect` block not met) or when its
      row differs from the table's.
  golden.py --fencesim BIN --source-dir DIR regen
      runs every shipped scenario and writes the table anew.
  golden.py --fencesim BIN --source-dir DIR stored
      runs the scenario of every folder kept in reports/ (the few the docs
      show and the rendering tests read) and the matrix, and compares their
      files byte for byte.

Why a table and not stored reports: a row is ~1 KiB and a diff of it says
what changed (a verdict, a metric, the fingerprint); the full reports of
every scenario were 19 MB, 77 % of the repository (issue #30).
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HEADER = "# scenario\tseed\tfingerprint\tevents\tverdicts\tmetrics"
TABLE = os.path.join("tests", "golden", "GOLDEN.tsv")


def flatten(prefix, value, out):
    """Scalar metrics as key=value; a duration ({ns, text}) as its nanoseconds."""
    if isinstance(value, dict):
        if "ns" in value and "text" in value:
            out.append(f"{prefix}={value['ns']}")
            return
        for key in value:  # report.json's own order (it is deterministic)
            flatten(f"{prefix}.{key}" if prefix else key, value[key], out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            flatten(f"{prefix}[{i}]", item, out)
    elif isinstance(value, float):
        out.append(f"{prefix}={value!r}")
    else:
        out.append(f"{prefix}={json.dumps(value)}")


def row_of(stem, report):
    verdicts = []
    for v in report["verdicts"]:
        first = v.get("first_violation")
        at = f"@{first['ns']}" if first else ""
        verdicts.append(f"{v['property']}={v['status']}{at}")
    metrics = []
    flatten("", report["metrics"], metrics)
    return "\t".join([stem, str(report["seed"]), report["run"]["fingerprint"],
                      str(report["run"]["events"]), " ".join(verdicts), " ".join(metrics)])


def read_table(source_dir):
    rows = {}
    path = os.path.join(source_dir, TABLE)
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                rows[line.split("\t", 1)[0]] = line
    return rows


def shipped(source_dir):
    folder = os.path.join(source_dir, "scenarios")
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json"))


def run(fencesim, source_dir, files, out):
    """`fencesim run FILES --out OUT --quiet` from the source folder; its exit code."""
    cmd = [fencesim, "run", *files, "--out", out, "--quiet"]
    done = subprocess.run(cmd, cwd=source_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.stdout.write(done.stdout)
    return done.returncode


def report_of(out, stem, source_dir):
    # A report folder is named after the scenario's `name`, which need not be the file's stem.
    with open(os.path.join(source_dir, "scenarios", stem + ".json"), encoding="utf-8") as f:
        text = f.read()
    name = stem
    try:
        name = json.loads(strip_comments(text)).get("scenario", stem)
    except ValueError:
        pass
    with open(os.path.join(out, name, "report.json"), encoding="utf-8") as f:
        return json.load(f)


def strip_comments(text):
    """Drops // and /* */ comments outside strings (scenario files may have them)."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def check(args, stems):
    table = read_table(args.source_dir)
    status = 0
    for stem in stems:
        with tempfile.TemporaryDirectory() as out:
            code = run(args.fencesim, args.source_dir, [f"scenarios/{stem}.json"], out)
            if code != 0:
                print(f"{stem}: fencesim run exited {code} (0 = every expectation of its expect block met)")
                status = 1
                if code != 1:
                    continue
            got = row_of(stem, report_of(out, stem, args.source_dir))
        want = table.get(stem)
        if want is None:
            print(f"{stem}: no row in {TABLE}; add it with tools/regen-reports.sh")
            status = 1
        elif got != want:
            status = 1
            print(f"{stem}: behaviour differs from {TABLE}")
            for label, w, g in zip(HEADER[2:].split("\t"), want.split("\t"), got.split("\t")):
                if w != g:
                    wf, gf = w.split(" "), g.split(" ")
                    changed = [f"  {label}: {a} -> {b}" for a, b in zip(wf, gf) if a != b]
                    if len(wf) != len(gf):
                        changed.append(f"  {label}: {len(wf)} fields -> {len(gf)} fields")
                    print("\n".join(changed))
            print("  if intended: tools/regen-reports.sh, and commit the table on its own saying why")
    if status == 0:
        print(f"{len(stems)} scenario(s) ran as {TABLE} says")
    return status


def regen(args):
    stems = shipped(args.source_dir)
    with tempfile.TemporaryDirectory() as out:
        code = run(args.fencesim, args.source_dir, [f"scenarios/{s}.json" for s in stems], out)
        if code not in (0, 1):
            print(f"fencesim run exited {code}: not regenerating")
            return 1
        rows = [row_of(s, report_of(out, s, args.source_dir)) for s in stems]
    with open(os.path.join(args.source_dir, TABLE), "w", encoding="utf-8") as f:
        f.write(HEADER + "\n" + "\n".join(rows) + "\n")
    print(f"{TABLE}: {len(rows)} rows")
    return 0 if code == 0 else 1


def compact_json(path):
    """The file's JSON on one line (reports/MATRIX.json is stored so, to stay
    under tidy's blob limit; the content is the matrix command's, key for key)."""
    with open(path, encoding="utf-8") as f:
        return json.dumps(json.load(f), ensure_ascii=False, separators=(",", ":")) + "\n"


def stored(args, regenerate):
    """The report folders kept in reports/ (and reports/MATRIX.md): byte for
    byte; reports/MATRIX.json: the fresh one in its compact form (compact_json)."""
    reports = os.path.join(args.source_dir, "reports")
    kept = sorted(d for d in os.listdir(reports) if os.path.isdir(os.path.join(reports, d)))
    by_name = {}
    for stem in shipped(args.source_dir):
        with open(os.path.join(args.source_dir, "scenarios", stem + ".json"), encoding="utf-8") as f:
            by_name[json.loads(strip_comments(f.read())).get("scenario", stem)] = stem
    status = 0
    with tempfile.TemporaryDirectory() as out:
        missing = [d for d in kept if d not in by_name]
        for d in missing:
            print(f"reports/{d} has no shipped scenario any more")
            status = 1
        files = [f"scenarios/{by_name[d]}.json" for d in kept if d in by_name]
        if files and run(args.fencesim, args.source_dir, files, out) not in (0,):
            status = 1
        matrix = subprocess.run([args.fencesim, "matrix", "scenarios/matrices/seed-table.json", "--out", out, "--quiet"],
                                cwd=args.source_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if matrix.returncode != 0:
            sys.stdout.write(matrix.stdout)
            status = 1
        pairs = [(os.path.join(reports, d), os.path.join(out, d)) for d in kept if d in by_name]
        if regenerate:
            for mine, fresh in pairs:
                shutil.rmtree(mine)
                shutil.copytree(fresh, mine)
            shutil.copyfile(os.path.join(out, "MATRIX.md"), os.path.join(reports, "MATRIX.md"))
            with open(os.path.join(reports, "MATRIX.json"), "w", encoding="utf-8") as f:
                f.write(compact_json(os.path.join(out, "MATRIX.json")))
            print(f"reports/: {len(pairs)} stored report folders and the matrix regenerated")
            return status
        with open(os.path.join(reports, "MATRIX.json"), encoding="utf-8") as f:
            json_same = f.read() == compact_json(os.path.join(out, "MATRIX.json"))
        md_same = filecmp.cmp(os.path.join(reports, "MATRIX.md"), os.path.join(out, "MATRIX.md"), shallow=False)
        for f, same in (("MATRIX.md", md_same), ("MATRIX.json", json_same)):
            if not same:
                print(f"reports/{f} differs from a fresh 'fencesim matrix scenarios/matrices/seed-table.json'")
                status = 1
        for mine, fresh in pairs:
            cmp = filecmp.dircmp(mine, fresh)
            diff = cmp.left_only + cmp.right_only + cmp.diff_files
            if diff:
                print(f"{os.path.relpath(mine, args.source_dir)} differs from a fresh run: {' '.join(sorted(diff))}")
                status = 1
    if status == 0:
        print(f"all {len(kept)} stored report folders and the matrix match")
    return status


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fencesim", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("mode", choices=["check", "regen", "stored", "regen-stored"])
    p.add_argument("stems", nargs="*")
    args = p.parse_args()
    args.fencesim = os.path.abspath(args.fencesim)
    if args.mode == "check":
        return check(args, args.stems or shipped(args.source_dir))
    if args.mode == "regen":
        return regen(args)
    return stored(args, args.mode == "regen-stored")


if __name__ == "__main__":
    sys.exit(main())
