#!/usr/bin/env bash
# The local stack: PostgreSQL 15, Redis 7, Kafka 3.9 (KRaft) and a schema registry, on loopback.
#
#   scripts/stack.sh up       start what is not running (idempotent: running parts are reused)
#   scripts/stack.sh down     stop what this checkout started (pid files under .stack/run), and
#                             the services started by scripts/start-local.sh
#   scripts/stack.sh status   what runs where
#   scripts/stack.sh env      the endpoints as KEY=value lines
#   scripts/stack.sh fetch    download the Maven artifacts (Kafka, the registry) into .cache/ only
#
# Set DATABASE_URL, REDIS_URL, KAFKA_BROKERS or SCHEMA_REGISTRY_URL to use an existing endpoint;
# that part is then not started. DTE_STACK_PORT_OFFSET shifts every port (a second checkout).
# State lives under .stack/ (data, logs, pids), downloaded artifacts under .cache/.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=stack/lib.sh
. "$HERE/stack/lib.sh"
. "$HERE/stack/postgres.sh"
. "$HERE/stack/redis.sh"
. "$HERE/stack/kafka.sh"
. "$HERE/stack/registry.sh"

COMPONENTS=(pg redis kafka registry)

endpoints() {
  echo "DATABASE_URL=${DATABASE_URL:-$LOCAL_DATABASE_URL}"
  echo "REDIS_URL=${REDIS_URL:-$LOCAL_REDIS_URL}"
  echo "KAFKA_BROKERS=${KAFKA_BROKERS:-$LOCAL_KAFKA_BROKERS}"
  echo "SCHEMA_REGISTRY_URL=${SCHEMA_REGISTRY_URL:-$LOCAL_SCHEMA_REGISTRY_URL}"
}

cmd_up() {
  local t0 c
  t0="$(now_ms)"
  for c in "${COMPONENTS[@]}"; do
    "${c}_up" || { warn "stack up failed (see above); parts already started keep running: scripts/stack.sh down"; return 1; }
  done
  endpoints >"$STACK_DIR/endpoints.env"
  say "stack up in $(($(now_ms) - t0)) ms; endpoints (also in .stack/endpoints.env):"
  endpoints | sed 's/^/[stack]   /'
}

cmd_down() {
  local i
  if [ -f "$HERE/start-local.sh" ]; then
    bash "$HERE/start-local.sh" stop-services || true
  fi
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
    "${COMPONENTS[$i]}_down" || true
  done
  say "down: nothing started by this checkout is running"
}

cmd_status() {
  local c
  for c in "${COMPONENTS[@]}"; do "${c}_status"; done
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) endpoints ;;
  fetch) kafka_fetch && registry_fetch && say "artifacts in $CACHE_DIR: Kafka $KAFKA_VERSION, Apicurio Registry $REGISTRY_VERSION" ;;
  *)
    echo "usage: $0 up|down|status|env|fetch" >&2
    exit 2
    ;;
esac
