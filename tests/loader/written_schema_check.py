#!/usr/bin/python3
"""Checks that what `fencesim write` prints conforms to the JSON Schema.

For every shipped scenario (scenarios/*.json, tests/loader/good/*.json and
../shared/cases/*.json when present), `fencesim write FILE` and
`fencesim write FILE --materialize-nemesis` must exit 0 and print one JSON
document that scenarios/schema/scenario.schema.json accepts.

  written_schema_check.py --fencesim BIN --source-dir DIR

Run with Debian's /usr/bin/python3 (python3-jsonschema). Exits 0 when every
written file conforms, 1 otherwise, 77 (CTest "skipped") when jsonschema is
missing.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:  # pragma: no cover
    print("python3-jsonschema is not installed; skipping")
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fencesim", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    src = args.source_dir
    with open(os.path.join(src, "scenarios", "schema", "scenario.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for pattern in ("scenarios/*.json", "tests/loader/good/*.json", "../shared/cases/*.json"):
        files += sorted(glob.glob(os.path.join(src, pattern)))
    if len(files) < 30:
        print(f"expected at least 30 shipped scenarios, found {len(files)}")
        return 1
    failures = 0
    checked = 0
    for path in files:
        for extra in ([], ["--materialize-nemesis"]):
            run = subprocess.run([args.fencesim, "write", path] + extra, capture_output=True, text=True, check=False)
            label = " ".join([os.path.relpath(path, src)] + extra)
            if run.returncode != 0:
                print(f"{label}: fencesim write exited {run.returncode}: {run.stderr.strip()}")
                failures += 1
                continue
            try:
                doc = json.loads(run.stdout)
            except json.JSONDecodeError as e:
                print(f"{label}: not JSON: {e}")
                failures += 1
                continue
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            if errors:
                where = "/".join(str(p) for p in errors[0].absolute_path)
                print(f"{label}: the schema refuses the written file at {where or '(top)'}: {errors[0].message}")
                failures += 1
            checked += 1
    print(f"{checked} written files checked, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
