"""The protocol's round trip, with no SDK (bench/program_bench.cpp): after
init, ROUNDS timer requests of 1 ns, each followed by its yield and
answered by its timer delivery. Reusable between runs."""
import json
import sys

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
out = sys.stdout
out.write('{"type":"hello","protocol":1,"sdk":"roundtrip","reuse":true}\n')
out.flush()
read = sys.stdin.readline
while True:
    line = read()
    if not line:
        break
    for i in range(1, ROUNDS + 1):
        out.write('{"type":"timer","id":%d,"after":1}\n{"type":"yield"}\n' % i)
        out.flush()
        json.loads(read())
    out.write('{"type":"yield"}\n')
    out.flush()
    read()  # end
    out.write('{"type":"ready"}\n')
    out.flush()
