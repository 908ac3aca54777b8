#!/usr/bin/env bash
# The external open-loop load of issue 27 against the deployment `npm start` runs:
#
#   scripts/bench/field-load.sh                      # 100 POST/s × 30 s, then 300 POST/s × 20 s
#   FIELD_PHASES=50x10,100x10 scripts/bench/field-load.sh
#
# 1. builds vegeta from the Go module proxy into .cache/bin when missing (scripts/ensure-vegeta.sh);
# 2. starts `npm start`'s deployment (scripts/start-local.sh: the stack, the SII simulator with
#    SII_SIMULATOR_REGISTER_MS / SII_SIMULATOR_STEP_MS, 2 000 / 1 000 ms unless set, the six
#    services, the demo issuer), or reuses the one that runs (then there is no cold phase);
# 3. runs scripts/bench/field-load.ts: when it started the services, the first phase right away
#    (the cold system, within the first minute), then every phase of FIELD_PHASES on the warm
#    system, and prints the configuration, POST p50/p95/p99, refusals by status, verdicts/s
#    sustained and CPU ms per document per process, cold beside warm;
# 4. stops the services it started (FIELD_KEEP=1 leaves them running).
#
# Everything start-local.sh reads applies (DTE_STACK_PORT_OFFSET, DTE_STACK_DIR, DATABASE_URL,
# DATABASE_SCHEMA, REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX, and the
# services' own variables such as RATE_LIMIT_MAX or API_MAX_INFLIGHT). See docs/benchmarks.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
STACK_DIR="${DTE_STACK_DIR:-$ROOT/.stack}"
export DTE_STACK_DIR="$STACK_DIR"
export SII_SIMULATOR_REGISTER_MS="${SII_SIMULATOR_REGISTER_MS:-2000}"
export SII_SIMULATOR_STEP_MS="${SII_SIMULATOR_STEP_MS:-1000}"

FIELD_VEGETA="$(bash scripts/ensure-vegeta.sh)"
export FIELD_VEGETA

alive_pid_file() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# the endpoints (the caller's, else the local stack's) for the helper only, which reads the
# database: start-local.sh must not see them as endpoints the caller gave
mapfile -t ENDPOINTS < <(bash scripts/stack.sh env)
export FIELD_STACK_DIR="$STACK_DIR"
helper_run() { env "${ENDPOINTS[@]}" npx tsx scripts/bench/field-load.ts; }

started=0
helper=""
stop_started() {
  if [ -n "$helper" ]; then kill "$helper" 2>/dev/null || true; fi
  if [ "$started" = 1 ] && [ "${FIELD_KEEP:-0}" != 1 ]; then
    echo "[field] stopping the services this script started (FIELD_KEEP=1 leaves them)" >&2
    bash scripts/start-local.sh stop-services >&2 || true
  fi
  rm -f "${FIELD_READY_FILE:-/nonexistent}"
}
trap stop_started EXIT

if alive_pid_file "$STACK_DIR/run/svc-api.pid"; then
  echo "[field] npm start's services already run (state $STACK_DIR): reused, no cold phase" >&2
  unset FIELD_READY_FILE
  helper_run
  exit $?
fi

# the demo issuer's folios: enough for every phase (and the cold one), so no folio request
# (which the api paces per type) falls inside the measured minute
need=0
IFS=, read -ra phases <<<"${FIELD_PHASES:-100x30,300x20}"
first=1
for p in "${phases[@]}"; do
  n=$((${p%x*} * ${p#*x}))
  need=$((need + n))
  [ "$first" = 1 ] && need=$((need + n)) && first=0
done
export DEMO_FOLIOS="${DEMO_FOLIOS:-$((need + 100 > 10000 ? 10000 : need + 100))}"
# node_modules first (start-local.sh would run npm ci under the helper's feet on a checkout whose
# lock changed); then the helper starts and waits for the ready file: the cold phase begins as
# npm start is ready
bash scripts/start-local.sh deps >&2 || exit 1
FIELD_READY_FILE="$(mktemp -u "${TMPDIR:-/tmp}/field-ready.XXXXXX")"
export FIELD_READY_FILE
helper_run &
helper=$!
echo "[field] npm start (scripts/start-local.sh), SII simulator register ${SII_SIMULATOR_REGISTER_MS} ms, step ${SII_SIMULATOR_STEP_MS} ms" >&2
started=1
if ! bash scripts/start-local.sh start; then
  echo failed >"$FIELD_READY_FILE"
  wait "$helper" || true
  helper=""
  exit 1
fi
date +%s%3N >"$FIELD_READY_FILE"
rc=0
wait "$helper" || rc=$?
helper=""
exit "$rc"
