#!/usr/bin/env bash
# Installs what fencesim needs from Debian 12 packages (as root).
#   tools/deps.sh          build dependencies
#   tools/deps.sh --test   plus what the test suite needs
set -euo pipefail
pkgs=(cmake g++ make lld pkg-config libboost-context-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev libmimalloc-dev)
# Lua 5.1 and the cjson/bit modules Redis loads: EVAL in the simulated Redis (models/redis/commands)
pkgs+=(liblua5.1-0-dev lua-cjson-dev lua-bitop-dev)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(python3 python3-jsonschema chromium clang-format)
  # a hung real-server test prints its threads' stacks (tests/support/hang_watchdog.hpp)
  pkgs+=(gdb)
  # program clients (scenarios/programs, sdk/python): redis-py on the simulated Redis
  pkgs+=(python3-redis)
  # model conformance (tests/conformance): real servers and the Redis client library
  pkgs+=(redis-server etcd-server etcd-client libhiredis-dev)
  # ZooKeeper 3.8 and the kazoo client (tests/conformance/zookeeper_conformance_test.cpp)
  pkgs+=(zookeeper python3-kazoo)
  # sweep shards run through GNU parallel and merged (tests/cli/shard_parallel_test.sh)
  pkgs+=(parallel)
  # timeline.html driven in Chromium by puppeteer-core (tests/browser): Node.js and npm
  # (a Node.js that bundles npm, e.g. NodeSource's, needs no separate npm package)
  pkgs+=(nodejs)
  command -v npm >/dev/null || pkgs+=(npm)
  # real-stack runs (fencesim-real, the RealStack tests): PostgreSQL as the
  # fenced resource (libpq to talk to it), Go and etcd 3.4's Go client for
  # the etcd client helper (real/etcd-lock)
  pkgs+=(postgresql libpq-dev golang-go golang-etcd-server-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
