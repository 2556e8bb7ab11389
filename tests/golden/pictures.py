#!/usr/bin/python3
"""The README's timeline pictures and the runs they were taken from.

docs/pictures.tsv has a row per picture: the PNG, the scenario file, the
seed, the extra `fencesim run` flags ("-" for none), the fingerprint of the
run the picture was taken from (report.json's run.fingerprint) and what the
picture shows. A picture of a run fencesim no longer makes shows a
counterexample (or a story, a size) that is not true any more — it happened
once (issue #35: the big run's pictures showed a no_stale_write story of an
older etcd model).

  pictures.py --fencesim BIN --source-dir DIR check
      runs each distinct (scenario, seed, flags) once and fails, naming the
      pictures and tools/retake-pictures.sh, when its fingerprint is not the
      one stored.
  pictures.py --fencesim BIN --source-dir DIR update
      rewrites the fingerprint column from today's runs (tools/retake-pictures.sh
      calls it after taking the pictures anew).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

TABLE = os.path.join("docs", "pictures.tsv")
HEADER = "# picture\tscenario\tseed\tflags\tfingerprint\tshows"
RETAKE = "tools/retake-pictures.sh"


def read_table(src):
    rows = []
    with open(os.path.join(src, TABLE), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if len(cells) != 6:
                sys.exit(f"{TABLE}:{n}: expected 6 tab-separated cells ({HEADER[2:]}), got {len(cells)}")
            rows.append(dict(zip(["picture", "scenario", "seed", "flags", "fingerprint", "shows"], cells)))
    return rows


def fingerprint(fencesim, src, row, work):
    """Runs the row's scenario as the picture was taken; report.json's run.fingerprint."""
    out = tempfile.mkdtemp(dir=work)
    flags = [] if row["flags"] == "-" else row["flags"].split()
    # The file's own seed, as a reader runs it (and as the page then names
    # its folder and reproduce line); the table's seed is checked against it.
    cmd = [fencesim, "run", os.path.join(src, row["scenario"]), *flags, "--out", out, "--quiet"]
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # 1: a property broke that the file does not expect (the big run has no
    # expect block); anything above is an error.
    if rc.returncode > 1:
        sys.exit(f"{' '.join(cmd)} exited {rc.returncode}: {rc.stderr.strip()}")
    reports = glob.glob(os.path.join(out, "**", "report.json"), recursive=True)
    if len(reports) != 1:
        sys.exit(f"{' '.join(cmd)} wrote {len(reports)} report.json files, expected 1")
    with open(reports[0], encoding="utf-8") as f:
        report = json.load(f)
    if str(report["seed"]) != row["seed"]:
        return f"seed {report['seed']} (the file's seed changed)"
    return report["run"]["fingerprint"]


def runs(fencesim, src, rows):
    """Today's fingerprint of each distinct (scenario, seed, flags)."""
    today = {}
    with tempfile.TemporaryDirectory() as work:
        for row in rows:
            key = (row["scenario"], row["seed"], row["flags"])
            if key not in today:
                today[key] = fingerprint(fencesim, src, row, work)
    return today


def check(fencesim, src):
    rows = read_table(src)
    today = runs(fencesim, src, rows)
    stale = []
    for row in rows:
        now = today[(row["scenario"], row["seed"], row["flags"])]
        if now != row["fingerprint"]:
            stale.append(f"  {row['picture']} ({row['shows']}) was taken from {row['scenario']} seed {row['seed']}, "
                         f"fingerprint {row['fingerprint']}; today's run gives {now}")
    if stale:
        print(f"{len(stale)} of {len(rows)} pictures in {TABLE} show a run fencesim no longer makes:")
        print("\n".join(stale))
        print(f"Retake them with {RETAKE} (it rewrites the pictures and {TABLE}); then check that the words "
              "beside them in README.md still say what they show, and commit the pictures with the table.")
        return 1
    print(f"{len(rows)} pictures: each run's fingerprint is the one stored in {TABLE}")
    return 0


def update(fencesim, src):
    rows = read_table(src)
    today = runs(fencesim, src, rows)
    lines = [HEADER]
    for row in rows:
        row["fingerprint"] = today[(row["scenario"], row["seed"], row["flags"])]
        lines.append("\t".join(row[k] for k in ["picture", "scenario", "seed", "flags", "fingerprint", "shows"]))
    with open(os.path.join(src, TABLE), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{TABLE}: {len(rows)} rows, fingerprints of today's runs")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fencesim", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("command", choices=["check", "update"])
    a = p.parse_args()
    return (check if a.command == "check" else update)(os.path.abspath(a.fencesim), os.path.abspath(a.source_dir))


if __name__ == "__main__":
    sys.exit(main())
