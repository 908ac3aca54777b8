#!/usr/bin/env bash
# Runs a command with Node.js 24 LTS first on PATH (scripts/ensure-node.sh), so npm scripts that
# are not shell scripts of their own (the benchmarks) run on the runtime production runs.
set -euo pipefail
node_dir="$(bash "$(dirname "${BASH_SOURCE[0]}")/ensure-node.sh")"
PATH="$node_dir:$PATH" exec "$@"
