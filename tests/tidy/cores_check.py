#!/usr/bin/env python3
"""Every registered test either takes a "cpus" slot (RESOURCE_GROUPS cpus:1),
runs alone (RUN_SERIAL) or is a real-stack comparison of one of the two
lanes (RESOURCE_LOCK realstack_lane_a / _b): tests/CMakeLists.txt "A core
each". A test that escaped all three would run beside as many computing
tests as there are cores under tools/test.sh.

    cores_check.py --build-dir BUILD [--ctest CTEST]
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--ctest", default="ctest")
    a = ap.parse_args()
    out = subprocess.run([a.ctest, "--test-dir", a.build_dir, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    bad, lanes, cores, serial = [], 0, 0, 0
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if props.get("RUN_SERIAL"):
            serial += 1
        elif any(str(l).startswith("realstack_lane_") for l in props.get("RESOURCE_LOCK", [])):
            lanes += 1
        elif props.get("RESOURCE_GROUPS"):
            groups = props["RESOURCE_GROUPS"]
            ok = any(r.get(".type") == "cpus" and r.get("slots") == 1
                     for g in groups for r in g.get("requirements", []))
            if ok:
                cores += 1
            else:
                bad.append(f"{t['name']}: RESOURCE_GROUPS {json.dumps(groups)} (expected cpus:1)")
        else:
            bad.append(f"{t['name']}: no RESOURCE_GROUPS cpus:1 (call fencesim_tests_need_a_core() "
                       "at the end of its CMakeLists.txt, or add ${FENCESIM_A_CORE} to its properties)")
    for b in bad:
        print(b)
    print(f"{len(tests)} tests: {cores} take a core, {lanes} in the real-stack lanes, {serial} run alone; "
          f"{len(bad)} with none of these")
    if len(tests) < 100:
        print("fewer than 100 tests listed: is the build dir right?")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
