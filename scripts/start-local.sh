#!/usr/bin/env bash
# `npm start`: the whole pipeline on this machine.
#
#   scripts/start-local.sh [start]       npm ci when node_modules is missing or stale, stack up (it fetches
#                                        the Maven artifacts when missing), migrations, pipeline topics, the SII simulator (when the package
#                                        has a start script) and the six services; reuses what runs
#   scripts/start-local.sh stop          stops the services, then the stack (same as stack.sh down)
#   scripts/start-local.sh stop-services stops only the services and the simulator
#   scripts/start-local.sh status        the stack and every service
#   scripts/start-local.sh deps          only the npm ci step (node_modules as package-lock.json says)
#
# Logs go to .stack/logs/<name>.log, pids to .stack/run/svc-<name>.pid. Local secrets (MASTER_KEY,
# SESSION_SECRET) are generated once into .stack/local.env; variables already set in the
# environment win over that file and over the defaults below.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=stack/lib.sh
. "$HERE/stack/lib.sh"

# Node.js 24 LTS first on PATH for npm ci and every service (the system's node when it is a 24.x,
# otherwise the registry's binary that scripts/ensure-node.sh installs under .cache/node).
if ! node_dir="$(bash "$HERE/ensure-node.sh")"; then
  echo "[stack] no Node.js 24 LTS: scripts/ensure-node.sh failed (see above)" >&2
  exit 1
fi
export PATH="$node_dir:$PATH"

SERVICES=(api signer sii-uploader sii-poller webhooks rcv-sync)

# The endpoint variables the caller set (the stack's own are exported later, for the services).
ENDPOINT_VARS=(DATABASE_URL REDIS_URL KAFKA_BROKERS SCHEMA_REGISTRY_URL)
UNSET_ENDPOINTS=()
for v in "${ENDPOINT_VARS[@]}"; do [ -n "${!v:-}" ] || UNSET_ENDPOINTS+=(-u "$v"); done

# The port each service answers on (the api's HTTP port, the others' health ports).
service_port() {
  case "$1" in
    sii-simulator) echo "$SII_PORT" ;;
    api) echo $((3000 + PORT_OFFSET)) ;;
    signer) echo $((3101 + PORT_OFFSET)) ;;
    sii-uploader) echo $((3102 + PORT_OFFSET)) ;;
    sii-poller) echo $((3103 + PORT_OFFSET)) ;;
    webhooks) echo $((3104 + PORT_OFFSET)) ;;
    rcv-sync) echo $((3105 + PORT_OFFSET)) ;;
  esac
}

service_url() {
  local port
  port="$(service_port "$1")"
  case "$1" in
    api) echo "http://127.0.0.1:$port/api/v1" ;;
    sii-simulator) echo "http://127.0.0.1:$port" ;;
    *) echo "health http://127.0.0.1:$port/healthz" ;;
  esac
}

simulator_present() {
  [ -f "$ROOT/packages/sii-simulator/package.json" ] &&
    node -e 'process.exit(require(process.argv[1]).scripts?.start ? 0 : 1)' "$ROOT/packages/sii-simulator/package.json"
}

local_env() {
  local f="$STACK_DIR/local.env"
  if [ ! -f "$f" ]; then
    umask 077
    {
      echo "# Generated once by scripts/start-local.sh for this checkout's local run. Not for production."
      echo "MASTER_KEY=$(head -c 32 /dev/urandom | base64)"
      echo "MASTER_KEY_ID=local1"
      echo "SESSION_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
      echo "SMTP_URL=smtp://127.0.0.1:$((1025 + PORT_OFFSET))"
    } >"$f"
  fi
  local line key
  while IFS= read -r line; do
    [[ "$line" =~ ^([A-Z_][A-Z0-9_]*)=(.*)$ ]] || continue
    key="${BASH_REMATCH[1]}"
    [ -n "${!key:-}" ] || export "$key=${BASH_REMATCH[2]}"
  done <"$f"
}

export_service_env() {
  eval "$(bash "$HERE/stack.sh" env | sed 's/^/export /')"
  export SII_BASE_URL="${SII_BASE_URL:-http://127.0.0.1:$SII_PORT}"
  export SII_SIMULATOR_HOST="${SII_SIMULATOR_HOST:-127.0.0.1}"
  export SII_SIMULATOR_PORT="${SII_SIMULATOR_PORT:-$SII_PORT}"
  # the simulator keeps its keys and its state (enrolments, folios, uploads) across restarts, as
  # the real SII does: the demo issuer's CAFs and enrolment survive stack down / npm start
  export SII_SIMULATOR_KEYS_FILE="${SII_SIMULATOR_KEYS_FILE:-$STACK_DIR/data/sii-simulator/keys.json}"
  export SII_SIMULATOR_STATE_FILE="${SII_SIMULATOR_STATE_FILE:-$STACK_DIR/data/sii-simulator/state.snapshot}"
  # CAFs the local SII grants are verified against its own keys, as production verifies the SII's
  export SII_CAF_KEYS_FILE="${SII_CAF_KEYS_FILE:-$SII_SIMULATOR_KEYS_FILE}"
  mkdir -p "$(dirname "$SII_SIMULATOR_KEYS_FILE")" "$(dirname "$SII_SIMULATOR_STATE_FILE")"
  # the state of an earlier checkout (a JSON file, which the simulator still reads) goes on
  local legacy="$STACK_DIR/data/sii-simulator/state.json"
  if [ -f "$legacy" ] && [ ! -e "$SII_SIMULATOR_STATE_FILE" ]; then mv "$legacy" "$SII_SIMULATOR_STATE_FILE"; fi
  # exchange rates the simulator starts with: an export without otra_moneda works at once
  export SII_SIMULATOR_EXCHANGE_RATES_FILE="${SII_SIMULATOR_EXCHANGE_RATES_FILE:-$ROOT/packages/sii-simulator/seed/exchange-rates.json}"
  export API_PORT="${API_PORT:-$(service_port api)}"
  export SIGNER_HEALTH_PORT="${SIGNER_HEALTH_PORT:-$(service_port signer)}"
  export SII_UPLOADER_HEALTH_PORT="${SII_UPLOADER_HEALTH_PORT:-$(service_port sii-uploader)}"
  export SII_POLLER_HEALTH_PORT="${SII_POLLER_HEALTH_PORT:-$(service_port sii-poller)}"
  export WEBHOOKS_HEALTH_PORT="${WEBHOOKS_HEALTH_PORT:-$(service_port webhooks)}"
  export RCV_SYNC_HEALTH_PORT="${RCV_SYNC_HEALTH_PORT:-$(service_port rcv-sync)}"
  local_env
}

# npm ci when node_modules is missing or was installed from another package-lock.json (a fresh
# clone, or a pull that changed the lock). The lock's hash is stamped into node_modules after an
# install; a node_modules without a stamp counts as current when npm wrote it after the lock.
ensure_node_modules() {
  local stamp="$ROOT/node_modules/.dte-lock.sha256" want have log="$LOG_DIR/npm-ci.log"
  want="$(sha256sum "$ROOT/package-lock.json" | cut -d' ' -f1)"
  have="$(cat "$stamp" 2>/dev/null || true)"
  [ -d "$ROOT/node_modules" ] && [ "$have" = "$want" ] && return 0
  if [ -d "$ROOT/node_modules" ] && [ -z "$have" ] && [ "$ROOT/node_modules/.package-lock.json" -nt "$ROOT/package-lock.json" ]; then
    echo "$want" >"$stamp"
    return 0
  fi
  if [ -d "$ROOT/node_modules" ]; then
    say "node_modules was installed from another package-lock.json: npm ci (log $log)"
  else
    say "no node_modules yet: npm ci (log $log)"
  fi
  mkdir -p "$LOG_DIR"
  if ! (cd "$ROOT" && npm ci --no-audit --no-fund) >"$log" 2>&1; then
    fail "npm ci" "$log" "installing the Node dependencies failed; fix what the log says (network to the npm registry, Node.js 24), then npm start again"
    return 1
  fi
  echo "$want" >"$stamp"
  say "node dependencies installed"
}

# The CPU priority of each process: the api answers the clients first; the pipeline's workers
# (and the local SII) have a queue, so they take what the api leaves, not a share of its time.
# PIPELINE_NICE (10 unless set; 0 gives every process the same priority) is their nice value on
# this machine; in Kubernetes each service is its own pod and its CPU request does the same.
# Each service runs in a session of its own at that nice, the session's too (exec_in_session of
# stack/lib.sh: Linux's autogroups would otherwise give each worker as much CPU as the api).
niceness() {
  if [ "$1" = api ]; then echo 0; else echo "${PIPELINE_NICE:-10}"; fi
}

# start_one NAME WORKSPACE: npm start of the workspace in a session of its own, logged and recorded.
start_one() {
  local name="$1" ws="$2" pid port log="$LOG_DIR/$1.log"
  port="$(service_port "$name")"
  if pid="$(running_pid "svc-$name")"; then
    say "$name: already running (pid $pid), reused"
    return 0
  fi
  if port_open "$port"; then
    fail "$name" "" "port $port is taken by a process this checkout did not start: find it with ss -ltnp 'sport = :$port' and stop it, or give this checkout other ports (DTE_STACK_PORT_OFFSET=100 npm start)"
    return 1
  fi
  : >"$log"
  (cd "$ROOT" && exec_in_session "$(niceness "$name")" npm start --silent -w "$ws") </dev/null >>"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$(pid_file "svc-$name")"
  say "$name: starting (pid $pid, nice $(niceness "$name"), log $log)"
}

wait_one() {
  local name="$1" pid port deadline
  port="$(service_port "$name")"
  pid="$(running_pid "svc-$name")" || { fail "$name" "$LOG_DIR/$name.log" "exited during start-up: fix what its log says, then npm start again (what already runs is reused)"; return 1; }
  deadline=$(($(date +%s) + 90))
  until port_open "$port"; do
    if ! alive "$pid"; then
      rm -f "$(pid_file "svc-$name")"
      fail "$name" "$LOG_DIR/$name.log" "exited during start-up: fix what its log says, then npm start again (what already runs is reused)"
      return 1
    fi
    [ "$(date +%s)" -lt "$deadline" ] || { fail "$name" "$LOG_DIR/$name.log" "not listening on $port after 90s"; return 1; }
    sleep 0.3
  done
  # listening is not ready: the simulator has no /readyz; every service checks what it needs
  [ "$name" = sii-simulator ] || wait_ready "$name" "$pid" "$port" || return 1
}

# The process group of each service (setsid made it a session leader): npm, sh, tsx and node.
stop_service() {
  local name="$1" pid
  pid="$(running_pid "svc-$name")" || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  if ! wait_until 20 group_gone "$pid"; then
    warn "$name (pid $pid) did not stop in 20s; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$(pid_file "svc-$name")"
  say "$name stopped"
}
group_gone() { ! pgrep -g "$1" >/dev/null 2>&1 && not_alive "$1"; }

cmd_start() {
  local t0 name failed=0
  t0="$(now_ms)"
  ensure_node_modules || return 1
  # stack.sh up fetches the Maven artifacts (Kafka, the registry) into .cache/ when missing
  bash "$HERE/stack.sh" up || return 1
  export_service_env
  say "migrations: npm run migrate -w @dte/database"
  (cd "$ROOT" && npm run --silent migrate -w @dte/database) 2>&1 | sed 's/^/[stack]   /'
  [ "${PIPESTATUS[0]}" = 0 ] || { fail migrations "" "the migrations failed (see above)"; return 1; }
  say "topics: npm run topics -w @dte/messaging"
  (cd "$ROOT" && npm run --silent topics -w @dte/messaging) 2>&1 | sed 's/^/[stack]   /'
  [ "${PIPESTATUS[0]}" = 0 ] || { fail topics "" "creating the pipeline topics failed (see above)"; return 1; }
  local names=()
  if simulator_present; then
    start_one sii-simulator @dte/sii-simulator || failed=1
    # the api verifies every CAF's FRMA with the SII's keys (SII_CAF_KEYS_FILE): locally, the
    # simulator's keys file, which it writes on its first start, so it must be up first
    wait_one sii-simulator || failed=1
  else
    say "sii-simulator: packages/sii-simulator has no start script yet; not started (SII_BASE_URL=$SII_BASE_URL)"
  fi
  for name in "${SERVICES[@]}"; do
    start_one "$name" "@dte/$name" || failed=1
    names+=("$name")
  done
  for name in "${names[@]}"; do
    wait_one "$name" || failed=1
  done
  if [ "$failed" = 1 ]; then
    warn "some services did not start or are not ready (see above); the rest keep running:"
    cmd_status | sed 's/^/[stack]   /' >&2
    warn "fix the FAILED part, then npm start again (what runs is reused), or npm run stack -- down to stop everything"
    return 1
  fi
  if simulator_present && [ "${DTE_DEMO_SEED:-1}" != 0 ]; then
    say "demo issuer (DTE_DEMO_SEED=0 skips it): npx tsx scripts/seed-demo.ts"
    (cd "$ROOT" && npx tsx scripts/seed-demo.ts) 2>&1 | sed 's/^/[stack]   /'
    [ "${PIPESTATUS[0]}" = 0 ] || { fail demo "" "seeding the demo issuer failed (see above)"; return 1; }
  fi
  say "everything is up in $(($(now_ms) - t0)) ms:"
  cmd_status | sed 's/^/[stack]   /'
  say "stop it all with: npm run stack -- down"
}

cmd_stop_services() {
  local name
  for name in "${SERVICES[@]}" sii-simulator; do stop_service "$name"; done
}

cmd_status() {
  local name pid
  env "${UNSET_ENDPOINTS[@]}" bash "$HERE/stack.sh" status
  for name in sii-simulator "${SERVICES[@]}"; do
    if pid="$(running_pid "svc-$name")"; then
      printf '%-13s running    %s  pid %s\n' "$name" "$(service_url "$name")" "$pid"
    else
      printf '%-13s stopped    (would answer on %s)\n' "$name" "$(service_url "$name")"
    fi
  done
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) bash "$HERE/stack.sh" down ;;
  stop-services) cmd_stop_services ;;
  deps) ensure_node_modules ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 [start|stop|stop-services|status]" >&2
    exit 2
    ;;
esac
