# Shared helpers of scripts/stack.sh and scripts/start-local.sh (sourced, not run).
# Paths, the port table (one place), progress output, pid files and readiness waits.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# DTE_STACK_DIR moves the state (data, logs, pids) elsewhere; with DTE_STACK_PORT_OFFSET it gives
# a second, independent stack (the foundation tests use one for start/stop checks).
STACK_DIR="${DTE_STACK_DIR:-$ROOT/.stack}"
CACHE_DIR="$ROOT/.cache"
RUN_DIR="$STACK_DIR/run"
LOG_DIR="$STACK_DIR/logs"

# The port table of ARCHITECTURE.md. DTE_STACK_PORT_OFFSET shifts all of them at once, so that a
# second checkout (for example a fresh clone being checked) can run its own stack beside this one.
PORT_OFFSET="${DTE_STACK_PORT_OFFSET:-0}"
PG_PORT=$((15432 + PORT_OFFSET))
REDIS_PORT=$((16379 + PORT_OFFSET))
KAFKA_PORT=$((19092 + PORT_OFFSET))
KAFKA_CONTROLLER_PORT=$((19093 + PORT_OFFSET))
REGISTRY_PORT=$((18081 + PORT_OFFSET))
SII_PORT=$((18080 + PORT_OFFSET))

LOCAL_DATABASE_URL="postgres://dte:dte@127.0.0.1:$PG_PORT/dte"
LOCAL_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
LOCAL_KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
# (the registry URL, with its API path, is set in stack/registry.sh)

mkdir -p "$RUN_DIR" "$LOG_DIR"

say() { printf '[stack] %s\n' "$*"; }
warn() { printf '[stack] %s\n' "$*" >&2; }

# fail COMPONENT LOGFILE MESSAGE: say which part failed and why, with the tail of its log.
fail() {
  local component="$1" logfile="$2"
  shift 2
  warn "FAILED: $component: $*"
  if [ -n "$logfile" ] && [ -f "$logfile" ]; then
    warn "--- last lines of $logfile ---"
    tail -n 25 "$logfile" >&2
    warn "---"
  fi
  return 1
}

# Milliseconds since the epoch, for the timings printed on start-up.
now_ms() { date +%s%3N; }

pid_file() { echo "$RUN_DIR/$1.pid"; }

# alive PID: the process exists and is not a zombie waiting to be reaped.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
not_alive() { ! alive "$1"; }

# The pid recorded for NAME when that process still runs, else nothing (and a stale file is removed).
running_pid() {
  local f pid
  f="$(pid_file "$1")"
  [ -f "$f" ] || return 1
  pid="$(cat "$f" 2>/dev/null)"
  if [ -n "$pid" ] && alive "$pid"; then
    echo "$pid"
    return 0
  fi
  rm -f "$f"
  return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_until SECONDS CMD...: run CMD every 0.2 s until it succeeds or SECONDS pass.
wait_until() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# What to do about a failing /readyz check (the names the services give them).
readiness_hint() {
  case "$1" in
    postgresql | database) echo "PostgreSQL does not answer: npm run stack -- status, then npm run stack -- up (log .stack/logs/postgres.log)" ;;
    redis) echo "Redis does not answer: npm run stack -- status, then npm run stack -- up (log .stack/logs/redis.log)" ;;
    kafka) echo "Kafka does not answer: npm run stack -- status, then npm run stack -- up (log .stack/logs/kafka.log)" ;;
    *) echo "the $1 check fails: see the service's log" ;;
  esac
}

# wait_ready NAME PID PORT [SECONDS]: wait until GET /readyz on PORT answers 200 (a listening
# service may still lack PostgreSQL, Redis or Kafka). FAILED, naming the failing checks and what to
# do about each, when it does not within SECONDS (60) or the process exits meanwhile.
wait_ready() {
  local name="$1" pid="$2" port="$3" secs="${4:-60}" deadline out code body="" failing="" check hints=""
  deadline=$(($(date +%s) + secs))
  while :; do
    if ! alive "$pid"; then
      fail "$name" "$LOG_DIR/$name.log" "exited during start-up: fix what its log says, then npm start again (what already runs is reused)"
      return 1
    fi
    out="$(curl -s -m 5 -w '\n%{http_code}' "http://127.0.0.1:$port/readyz" 2>/dev/null)"
    code="${out##*$'\n'}"
    body="${out%$'\n'*}"
    [ "$code" = 200 ] && return 0
    [ "$(date +%s)" -lt "$deadline" ] || break
    sleep 0.5
  done
  # {"status":"not_ready","failing":[{"name":"kafka","error":"unavailable"}, ...]}
  failing="$(printf '%s' "$body" | grep -o '"name":"[^"]*"' | sed 's/"name":"\([^"]*\)"/\1/' | tr '\n' ' ')"
  for check in $failing; do hints+="; $(readiness_hint "$check")"; done
  fail "$name" "$LOG_DIR/$name.log" "listening on $port but not ready after ${secs}s (GET /readyz answered ${code:-nothing}${failing:+, failing: ${failing% }})${hints:-; see its log}"
  return 1
}

# stop_pid NAME [SECONDS]: TERM the recorded process, wait for it, KILL it if it lingers.
# exec_in_session NICE CMD...: replaces the calling (sub)shell with CMD in a session of its own
# (setsid) at nice NICE, the session's autogroup at NICE too. Linux's autogroup scheduling (on by
# default, kernel.sched_autogroup_enabled) shares the CPU between sessions first and applies a
# process's nice only against the processes of its own session: without the session's nice
# (/proc/<pid>/autogroup), a worker at nice 10 in its own session gets as much CPU as the api
# under load, and so do PostgreSQL's backends together (they share the postmaster's session). A
# kernel without autogroups has no such file: the process's nice does the work alone.
exec_in_session() {
  local n="$1"
  shift
  exec setsid nice -n "$n" bash -c '
    if [ -e /proc/self/autogroup ] && ! echo "$1" 2>/dev/null >/proc/self/autogroup; then
      echo "[stack] could not set this session'"'"'s CPU share to nice $1 ($(cat /proc/self/autogroup)): it takes as much CPU as the api under load" >&2
    fi
    shift
    exec "$@"' exec-in-session "$n" "$@"
}

stop_pid() {
  local name="$1" grace="${2:-20}" pid
  pid="$(running_pid "$name")" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_until "$grace" not_alive "$pid"; then
    warn "$name (pid $pid) did not stop in ${grace}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$(pid_file "$name")"
  say "$name stopped (pid $pid)"
}

# Run a command as the unprivileged owner of the PostgreSQL data (root may not run postgres).
as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# ensure_debian_package PACKAGE CHECK: install PACKAGE with apt-get when CHECK (a command) fails.
ensure_debian_package() {
  local pkg="$1" check="$2"
  "$check" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    fail "$pkg" "" "Debian package $pkg is missing and only root can install it (apt-get install $pkg)"
    return 1
  fi
  say "installing Debian package $pkg"
  if [ ! -f "$STACK_DIR/.apt-updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$LOG_DIR/apt.log" 2>&1 && touch "$STACK_DIR/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >>"$LOG_DIR/apt.log" 2>&1 ||
    { fail "$pkg" "$LOG_DIR/apt.log" "apt-get install $pkg failed"; return 1; }
  "$check" >/dev/null 2>&1 || { fail "$pkg" "" "installed $pkg but still cannot find it"; return 1; }
}
