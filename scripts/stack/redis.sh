# Redis 7 of the local stack (sourced by scripts/stack.sh): Debian's redis-server with its own
# config and data folder under .stack/redis, loopback only.

REDIS_HOME="$STACK_DIR/redis"
REDIS_LOG="$LOG_DIR/redis.log"

redis_bin() { command -v redis-server; }

redis_ready() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

redis_up() {
  if [ -n "${REDIS_URL:-}" ]; then
    say "redis: REDIS_URL is set; using it, not starting one"
    return 0
  fi
  local pid t0
  if pid="$(running_pid redis)"; then
    say "redis: already running (pid $pid) on 127.0.0.1:$REDIS_PORT, reused"
    return 0
  fi
  if port_open "$REDIS_PORT"; then
    if redis_ready; then
      say "redis: 127.0.0.1:$REDIS_PORT answers but was not started by this checkout; reused (down leaves it)"
      return 0
    fi
    fail redis "" "port $REDIS_PORT is taken by something that does not answer PING"
    return 1
  fi
  ensure_debian_package redis-server redis_bin || return 1
  t0="$(now_ms)"
  mkdir -p "$REDIS_HOME/data"
  cat >"$REDIS_HOME/redis.conf" <<CONF
bind 127.0.0.1
port $REDIS_PORT
protected-mode yes
daemonize yes
pidfile $(pid_file redis)
logfile $REDIS_LOG
dir $REDIS_HOME/data
appendonly yes
appendfsync everysec
save ""
maxmemory 256mb
CONF
  say "redis: starting on 127.0.0.1:$REDIS_PORT"
  : >"$REDIS_LOG"
  if ! redis-server "$REDIS_HOME/redis.conf" >>"$REDIS_LOG" 2>&1; then
    fail redis "$REDIS_LOG" "redis-server did not start"
    return 1
  fi
  wait_until 15 redis_ready || { fail redis "$REDIS_LOG" "no PONG after 15s"; return 1; }
  say "redis: ready in $(($(now_ms) - t0)) ms (pid $(cat "$(pid_file redis)"), log $REDIS_LOG)"
}

redis_down() { stop_pid redis 15; }

redis_status() {
  if [ -n "${REDIS_URL:-}" ]; then
    echo "redis     external   $REDIS_URL (REDIS_URL)"
  elif pid="$(running_pid redis)"; then
    echo "redis     running    $LOCAL_REDIS_URL  pid $pid"
  elif port_open "$REDIS_PORT"; then
    echo "redis     foreign    127.0.0.1:$REDIS_PORT answers, not started by this checkout"
  else
    echo "redis     stopped    (would listen on 127.0.0.1:$REDIS_PORT)"
  fi
}
