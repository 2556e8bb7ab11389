#!/usr/bin/env python3
"""The matrix files that ship (scenarios/matrices/*.json) and the test ones
(tests/explore/matrix/small.json) follow scenarios/schema/matrix.schema.json,
and a few broken ones do not. Exits 77 (skipped) without python3-jsonschema."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "loader"))
try:
    import jsonschema
    from schema_check import strip_comments
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)


def main():
    src = sys.argv[1]
    with open(os.path.join(src, "scenarios", "schema", "matrix.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted(glob.glob(os.path.join(src, "scenarios", "matrices", "*.json")))
    files.append(os.path.join(src, "tests", "explore", "matrix", "small.json"))
    failed = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            doc = json.loads(strip_comments(f.read()))
        errors = list(validator.iter_errors(doc))
        if errors:
            failed += 1
            print(f"{path}: {errors[0].message}")
    good = {"matrix": "m", "base": {}, "rows": [{"name": "r"}], "columns": [{"name": "c"}]}
    bad = [
        dict(good, sedes=3),
        dict(good, rows=[]),
        dict(good, columns=[{"name": "Pause"}]),
        dict(good, rows=[{"name": "r", "cells": {"c": {"overrides": {}, "not_applicable": "x"}}}]),
        {k: v for k, v in good.items() if k != "base"},
    ]
    if list(validator.iter_errors(good)):
        failed += 1
        print("a minimal matrix does not follow the schema")
    for i, doc in enumerate(bad):
        if not list(validator.iter_errors(doc)):
            failed += 1
            print(f"broken matrix {i} follows the schema")
    print(f"{len(files)} matrix files checked, {failed} problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
