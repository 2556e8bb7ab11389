#!/usr/bin/python3
"""Checks that scenarios/schema/scenario.schema.json and the loader agree.

Every file the project ships or tests with is judged twice: by the JSON
Schema (after stripping // and /* */ comments, refusing duplicate keys and
NaN/Infinity as the loader does) and by the loader, through
`fencesim_validate_helper FILE` (exit 0: loads, 2: refused).

  scenarios/*.json, ../shared/cases/*.json, tests/loader/good/*.json
      both must accept
  report.json of each shipped scenario with a nemesis (run here by
  `fencesim run --out <temporary folder>`)
      its nemesis_draws pasted into the scenario's faults (nemesis
      removed): both must accept (docs/REPORTS.md)
  tests/loader/bad/*.json
      the loader must refuse; the schema must refuse too, unless
      bad/expected.json marks the file "loader_only" (a rule the schema
      cannot express, such as node names), in which case the schema must
      accept it -- so a stale mark is caught as well.

Run with Debian's /usr/bin/python3 (python3-jsonschema). Exits 0 when all
agree, 1 otherwise, 77 (CTest "skipped") when jsonschema is missing.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:  # pragma: no cover
    print("python3-jsonschema is not installed; skipping")
    sys.exit(77)


def strip_comments(text):
    """Removes // and /* */ comments outside strings (as nlohmann-json's ignore_comments)."""
    out = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated comment")
            out.append(" ")
            i = j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError("duplicate key %r" % k)
        seen[k] = v
    return seen


def reject_constant(name):
    raise ValueError("not JSON: %s" % name)


def schema_verdict(validator, path):
    """(accepted, reason)"""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.loads(strip_comments(f.read()), object_pairs_hook=no_duplicates,
                             parse_constant=reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError) as e:
        return False, "not parseable: %s" % e
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        return False, "%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message[:200])
    return True, ""


def loader_verdict(helper, path):
    r = subprocess.run([helper, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    if r.returncode not in (0, 2):
        raise SystemExit("helper crashed on %s (exit %d): %s" % (path, r.returncode, r.stdout.decode(errors="replace")))
    return r.returncode == 0, r.stdout.decode(errors="replace").strip()


def pasted_nemesis_files(src, fencesim, out_dir):
    """Each shipped scenario with a nemesis, its report's
    nemesis_draws appended to its faults and the nemesis removed, written
    to out_dir; returns the paths."""
    out = []
    for p in sorted(glob.glob(os.path.join(src, "scenarios", "*.json"))):
        if p.endswith(".schema.json"):
            continue
        with open(p, encoding="utf-8") as f:
            doc = json.loads(strip_comments(f.read()))
        if "nemesis" not in doc:
            continue
        name = doc.get("scenario", os.path.splitext(os.path.basename(p))[0])
        runs = os.path.join(out_dir, "runs")
        r = subprocess.run([fencesim, "run", p, "--out", runs, "--quiet"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300)
        if r.returncode not in (0, 1):
            raise SystemExit("fencesim run %s failed (exit %d): %s" % (p, r.returncode, r.stdout.decode(errors="replace")))
        report = os.path.join(runs, name, "report.json")
        with open(report, encoding="utf-8") as f:
            draws = json.load(f)["nemesis_draws"]
        del doc["nemesis"]
        doc["faults"] = doc.get("faults", []) + draws
        path = os.path.join(out_dir, "pasted-" + os.path.basename(p))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        out.append(path)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--helper", required=True)
    ap.add_argument("--fencesim", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    src = args.source_dir
    with open(os.path.join(src, "scenarios", "schema", "scenario.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    good = [p for p in sorted(glob.glob(os.path.join(src, "scenarios", "*.json"))) if not p.endswith(".schema.json")]
    shared = sorted(glob.glob(os.path.join(src, "..", "shared", "cases", "*.json")))
    if not shared:
        print("note: no acceptance cases beside the repository (../shared/cases)")
    good += shared + sorted(glob.glob(os.path.join(src, "tests", "loader", "good", "*.json")))
    pasted_dir = tempfile.mkdtemp(prefix="fencesim-pasted-")
    pasted = pasted_nemesis_files(src, args.fencesim, pasted_dir)
    if not pasted:
        print("FAIL: no shipped scenario with a nemesis and a golden report to paste")
        return 1
    good += pasted
    bad_dir = os.path.join(src, "tests", "loader", "bad")
    with open(os.path.join(bad_dir, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    bad = [p for p in sorted(glob.glob(os.path.join(bad_dir, "*.json"))) if os.path.basename(p) != "expected.json"]

    passed, failed = 0, 0

    def report(ok, path, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s: %s" % (path if path.startswith(pasted_dir) else os.path.relpath(path, src), what))

    for p in good:
        s_ok, s_why = schema_verdict(validator, p)
        l_ok, l_why = loader_verdict(args.helper, p)
        report(s_ok and l_ok, p, "must load; schema: %s; loader: %s" % (s_why or "accepts", l_why))
    for p in bad:
        name = os.path.basename(p)
        entry = expected.get(name)
        if entry is None:
            report(False, p, "no entry in bad/expected.json")
            continue
        loader_only = bool(entry.get("loader_only", False))
        s_ok, s_why = schema_verdict(validator, p)
        l_ok, l_why = loader_verdict(args.helper, p)
        if l_ok:
            report(False, p, "the loader accepts a file of the bad corpus")
        elif loader_only:
            report(s_ok, p, "marked loader_only, but the schema refuses it too (%s): drop the mark" % s_why)
        else:
            report(not s_ok, p, "the loader refuses it (%s) but the schema accepts it; "
                                "tighten the schema or mark it loader_only" % l_why)
    for p in pasted:
        os.remove(p)
    shutil.rmtree(pasted_dir)
    print("schema/loader agreement: %d files (%d good, %d of them pasted nemesis draws, %d bad)"
          % (len(good) + len(bad), len(good), len(pasted), len(bad)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
