#!/bin/sh
# What the image runs: `docker-entrypoint.sh <command> [args...]`.
#   api | signer | sii-uploader | sii-poller | webhooks | rcv-sync   a service (its src/main.ts)
#   migrate [--check|--revert]   database migrations (npm run migrate -w @dte/database)
#   topics                       create the pipeline topics (npm run topics -w @dte/messaging)
#   api-key ...                  the api's key tool (npm run api-key -w @dte/api)
# Each runs as `npm start -w @dte/<svc>` would (same working directory, same tsx), but through
# exec, so SIGTERM reaches the service itself and its graceful shutdown runs.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
# tsx: the repository's own when present (a checkout), else the image's global one.
PATH="$root/node_modules/.bin:$PATH"
export PATH

run() {
  cd "$root/$1"
  shift
  exec tsx "$@"
}

cmd="${1:-help}"
[ "$#" -gt 0 ] && shift
case "$cmd" in
  api | signer | sii-uploader | sii-poller | webhooks | rcv-sync) run "services/$cmd" src/main.ts "$@" ;;
  migrate) run packages/database src/cli/migrate.ts "$@" ;;
  topics) run packages/messaging src/cli/ensure-topics.ts "$@" ;;
  api-key) run services/api src/api-keys-cli.ts "$@" ;;
  help | -h | --help)
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    echo "unknown command \"$cmd\" (one of: api signer sii-uploader sii-poller webhooks rcv-sync migrate topics api-key)" >&2
    exit 64
    ;;
esac
