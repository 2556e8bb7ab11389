"""``python3 -m fencesim client.py [args…]``: runs client.py as a program
client, afresh (new globals, runpy) for every run of a sweep, in one warm
process (PROTOCOL.md "Speed"). Imported modules (redis, your libraries)
stay loaded between runs; module-level state of client.py does not."""
import os
import runpy
import sys

from ._runner import serve


def _usage():
    sys.stderr.write("usage: python3 -m fencesim SCRIPT.py [ARGS...]\n")
    sys.exit(2)


if len(sys.argv) < 2:
    _usage()
_script = os.path.abspath(sys.argv[1])
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(_script))


def _main():
    runpy.run_path(_script, run_name="__main__")


sys.exit(serve(_main, reuse=True))
