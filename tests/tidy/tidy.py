#!/usr/bin/python3
"""Tidy checks over the source tree, in the spirit of TigerBeetle's tidy.zig.

  tidy.py --source-dir DIR functions   the function-length ratchet
  tidy.py --source-dir DIR blobs       no tracked file over 256 KiB
  tidy.py --source-dir DIR rules       a known rule's formula only in its owner
  tidy.py --source-dir DIR report      every function over 70 lines, longest first

The function-length ratchet: no function may be longer than 70 lines, except
those listed in tests/tidy/long_functions.tsv (the functions that were over
the limit when the ratchet was introduced), and a listed function may not
grow past its recorded length. Split a function instead of raising the
limit; when a listed one shrinks or goes, lower or drop its line
(`tidy.py ... functions --tighten` rewrites the file with today's lengths,
never raising one).

A function is found by a small brace scanner, not a compiler: a `{` at
namespace or class level whose head (the text since the previous `;`, `{`
or `}`) ends in a parameter list, with comments, strings and preprocessor
lines removed. Its length is the number of lines from the line that names
it to its closing brace. Lambdas and local classes count toward the
function that holds them.
"""
import argparse
import os
import re
import subprocess
import sys

LIMIT = 70
BASELINE = os.path.join("tests", "tidy", "long_functions.tsv")
SOURCE_DIRS = ("sim", "models", "loader", "report", "explore", "cli", "real", "include", "bench", "examples")
BLOB_LIMIT = 256 * 1024

# A rule's formula, and the one file allowed to spell it (issue #30: "a
# tidy-style test fails if a known rule's formula appears outside its owner").
RULES = [
    ("the default renewal interval, a third of the TTL (default_renew_interval)",
     re.compile(r"ttl\)?\s*/\s*3\b"), {"models/validate.cpp"}),
    ("Sentinel's failover timeout, max(2 x down_after, 3 s) (failover_timeout)",
     re.compile(r"2\s*\*\s*[a-z_.]*down_after|down_after[\w.()]*\s*\*\s*2\b"),
     {"models/redis/redis.cpp", "models/redis/sentinel.cpp"}),
]


def tracked(source_dir):
    out = subprocess.run(["git", "ls-files", "-z"], cwd=source_dir, stdout=subprocess.PIPE, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def sources(source_dir):
    return sorted(p for p in tracked(source_dir)
                  if p.endswith((".cpp", ".hpp")) and p.split("/", 1)[0] in SOURCE_DIRS)


def strip(text):
    """The text with comments, string/char literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 100'000
            out.append(c)
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|return|try)\b")
NOT_FUNCTION_HEAD = re.compile(r"^(namespace|class|struct|union|enum|extern|template\s*<[^>]*>\s*(class|struct))\b")


def functions(path, text):
    """[(name, first line, last line)] of the functions defined in `text`."""
    s = strip(text)
    found = []
    stack = []  # per open brace: "scope" (namespace/class/top) or "body"
    head_start = 0
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in ";":
            head_start = i + 1
        elif c == "{":
            in_scope = all(k[0] == "scope" for k in stack)
            head = " ".join(s[head_start:i].split())
            kind = "body"
            if in_scope:
                if NOT_FUNCTION_HEAD.match(head) or not head:
                    kind = "scope"
                elif head.endswith(("=", ",", "(", "return")) or "=" in head.split("(")[0]:
                    kind = "init"
                elif re.search(r"\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$", head) or \
                        re.search(r"\)\s*:\s*\w", head):  # a constructor's initializer list
                    if not CONTROL.match(head):
                        kind = "function"
                else:
                    kind = "scope" if re.match(r"^[\w:<>\s]*$", head) else "init"
            if kind == "function":
                name_part = head.split("(")[0].split()
                name = name_part[-1] if name_part else "?"
                first_line = s.count("\n", 0, head_start + len(s[head_start:i]) - len(s[head_start:i].lstrip())) + 1
                stack.append(("function", name, first_line))
            else:
                stack.append((kind, None, None))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, name, first_line = stack.pop()
                if kind == "function":
                    found.append((name, first_line, s.count("\n", 0, i) + 1))
            head_start = i + 1
        i += 1
    return found


def measure(source_dir):
    """{(file, name#k): lines}: k counts same-named functions in a file."""
    out = {}
    for path in sources(source_dir):
        with open(os.path.join(source_dir, path), encoding="utf-8") as f:
            text = f.read()
        seen = {}
        for name, first, last in functions(path, text):
            k = seen.get(name, 0)
            seen[name] = k + 1
            out[(path, f"{name}#{k}")] = (last - first + 1, first)
    return out


def read_baseline(source_dir):
    base = {}
    path = os.path.join(source_dir, BASELINE)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    file, name, lines = line.rstrip("\n").split("\t")
                    base[(file, name)] = int(lines)
    return base


def write_baseline(source_dir, entries):
    with open(os.path.join(source_dir, BASELINE), "w", encoding="utf-8") as f:
        f.write("# file\tfunction#k\tlines: functions allowed over %d lines, never to grow (tests/tidy/tidy.py)\n"
                % LIMIT)
        for (file, name), lines in sorted(entries.items()):
            f.write(f"{file}\t{name}\t{lines}\n")


def check_functions(source_dir, tighten):
    now = measure(source_dir)
    base = read_baseline(source_dir)
    bad = []
    for key, (lines, first) in sorted(now.items()):
        allowed = base.get(key, LIMIT)
        if lines > allowed:
            what = "grew past its recorded" if key in base else "is over the"
            bad.append(f"{key[0]}:{first}: {key[1].split('#')[0]} has {lines} lines: it {what} limit of {allowed}; "
                       "split it")
    if tighten:
        kept = {k: min(v, now[k][0]) for k, v in base.items() if k in now and now[k][0] > LIMIT}
        write_baseline(source_dir, kept)
        print(f"{BASELINE}: {len(kept)} functions over {LIMIT} lines")
    for b in bad:
        print(b)
    over70 = sum(1 for v in now.values() if v[0] > LIMIT)
    over80 = sum(1 for v in now.values() if v[0] > 80)
    print(f"{len(now)} functions; {over80} over 80 lines, {over70} over {LIMIT}; {len(bad)} over their limit")
    return 1 if bad else 0


def check_blobs(source_dir):
    bad = []
    for path in tracked(source_dir):
        full = os.path.join(source_dir, path)
        if path.endswith((".png", "package-lock.json")) or not os.path.isfile(full):
            continue
        size = os.path.getsize(full)
        if size > BLOB_LIMIT:
            bad.append(f"{path}: {size} bytes, over 256 KiB: keep behaviour in tests/golden/GOLDEN.tsv, "
                       "store full reports only where a test is about their rendering")
    for b in bad:
        print(b)
    print(f"{len(bad)} tracked files over 256 KiB")
    return 1 if bad else 0


def check_rules(source_dir):
    bad = []
    # examples/ is users' code: a user's own policy may renew at a third of the TTL.
    for path in (p for p in sources(source_dir) if not p.startswith("examples/")):
        with open(os.path.join(source_dir, path), encoding="utf-8") as f:
            text = strip(f.read())
        for what, pattern, owners in RULES:
            if path in owners:
                continue
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{path}:{line}: spells {what}; call the owner ({', '.join(sorted(owners))}) instead")
    for b in bad:
        print(b)
    print(f"{len(RULES)} rules, {len(bad)} spelt outside their owner")
    return 1 if bad else 0


def report(source_dir):
    now = measure(source_dir)
    for (file, name), (lines, first) in sorted(now.items(), key=lambda kv: -kv[1][0]):
        if lines > LIMIT:
            print(f"{lines}\t{file}:{first}\t{name.split('#')[0]}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source-dir", required=True)
    p.add_argument("check", choices=["functions", "blobs", "rules", "report"])
    p.add_argument("--tighten", action="store_true")
    args = p.parse_args()
    if args.check == "functions":
        return check_functions(args.source_dir, args.tighten)
    if args.check == "blobs":
        return check_blobs(args.source_dir)
    if args.check == "rules":
        return check_rules(args.source_dir)
    return report(args.source_dir)


if __name__ == "__main__":
    sys.exit(main())
