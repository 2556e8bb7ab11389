#!/usr/bin/env bash
# Installs the npm packages of the Node SDK (sdk/node) and of the Node
# example programs (scenarios/programs/node/*/), each exactly as its
# package-lock.json pins it (`npm ci`, from the npm registry), where its
# node_modules is missing or older than the lock. tools/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "tools/node-deps.sh: npm is missing (tools/deps.sh --test installs it)" >&2; exit 1; }
for lock in sdk/node/package-lock.json scenarios/programs/node/*/package-lock.json; do
  dir=$(dirname "$lock")
  stamp=$dir/node_modules/.package-lock.json
  if [[ ! -f "$stamp" || "$lock" -nt "$stamp" ]]; then
    echo "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
