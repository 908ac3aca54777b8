#!/bin/sh
# What the image runs: `docker-entrypoint.sh <command> [args...]`.
#   api | signer | sii-uploader | sii-poller | webhooks | rcv-sync   a service (its dist/main.js)
#   migrate [--check|--revert]   database migrations (@dte/database's dist/cli/migrate.js)
#   topics                       create the pipeline topics (@dte/messaging's dist/cli/ensure-topics.js)
#   api-key ...                  the api's key tool (@dte/api's dist/api-keys-cli.js)
# Each runs the compiled JavaScript (scripts/build/build.sh, laid out by scripts/build/assemble.cjs)
# with plain node and source maps, from its workspace's directory, through exec, so SIGTERM reaches
# the program itself and its graceful shutdown runs. The image has no TypeScript and no tsx.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"

run() {
  cd "$root/$1"
  [ -f "$2" ] || {
    echo "$1/$2 is missing: this tree is not a compiled build (npm run build, then scripts/build/assemble.cjs)" >&2
    exit 70
  }
  script="$2"
  shift 2
  exec node --enable-source-maps "$script" "$@"
}

cmd="${1:-help}"
[ "$#" -gt 0 ] && shift
case "$cmd" in
  api | signer | sii-uploader | sii-poller | webhooks | rcv-sync) run "services/$cmd" dist/main.js "$@" ;;
  migrate) run packages/database dist/cli/migrate.js "$@" ;;
  topics) run packages/messaging dist/cli/ensure-topics.js "$@" ;;
  api-key) run services/api dist/api-keys-cli.js "$@" ;;
  help | -h | --help)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    echo "unknown command \"$cmd\" (one of: api signer sii-uploader sii-poller webhooks rcv-sync migrate topics api-key)" >&2
    exit 64
    ;;
esac
