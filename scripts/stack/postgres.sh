# PostgreSQL 15 of the local stack (sourced by scripts/stack.sh): Debian's binaries, a data folder
# of its own under .stack/pg owned by the unprivileged `postgres` user, loopback TCP only.

# .stack/pg, or where its link points (see pg_prepare_dirs): PostgreSQL gets the real path.
pg_paths() {
  PG_HOME="$(readlink -f "$STACK_DIR/pg" 2>/dev/null || echo "$STACK_DIR/pg")"
  PG_DATA="$PG_HOME/data"
  PG_LOG="$PG_HOME/postgres.log"
}
pg_paths

pg_bin() {
  local d
  for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$d/pg_ctl" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

pg_ready() { "$(pg_bin)/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d dte -U dte; }

pg_prepare_dirs() {
  if [ "$(id -u)" != 0 ]; then
    mkdir -p "$PG_HOME"
    return 0
  fi
  if [ ! -e "$STACK_DIR/pg" ]; then
    mkdir -p "$STACK_DIR/pg"
    chown postgres: "$STACK_DIR/pg"
    if ! runuser -u postgres -- test -w "$STACK_DIR/pg"; then
      # A folder above the checkout is closed to other users (a clone under /root, say): the
      # data lives under /var/tmp instead, linked from .stack/pg.
      rmdir "$STACK_DIR/pg"
      local alt
      alt="/var/tmp/dte-pg-$(printf '%s' "$STACK_DIR" | cksum | cut -d' ' -f1)"
      mkdir -p "$alt"
      chown postgres: "$alt"
      chmod 700 "$alt"
      ln -s "$alt" "$STACK_DIR/pg"
      say "postgres: the postgres user cannot reach $STACK_DIR; its data lives in $alt (linked from .stack/pg)"
    fi
    pg_paths
  fi
  chown postgres: "$PG_HOME"
  if ! runuser -u postgres -- test -w "$PG_HOME"; then
    fail postgres "" "the postgres user cannot write $PG_HOME"
    return 1
  fi
}

pg_up() {
  if [ -n "${DATABASE_URL:-}" ]; then
    say "postgres: DATABASE_URL is set; using it, not starting one"
    return 0
  fi
  local pid t0
  if pid="$(running_pid postgres)"; then
    say "postgres: already running (pid $pid) on 127.0.0.1:$PG_PORT, reused"
    return 0
  fi
  if port_open "$PG_PORT"; then
    if pg_ready; then
      say "postgres: 127.0.0.1:$PG_PORT answers but was not started by this checkout; reused (down leaves it)"
      return 0
    fi
    fail postgres "" "port $PG_PORT is taken by something that is not a PostgreSQL accepting database dte"
    return 1
  fi
  ensure_debian_package postgresql pg_bin || return 1
  pg_prepare_dirs || return 1
  t0="$(now_ms)"
  local bin
  bin="$(pg_bin)"
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    say "postgres: initdb into $PG_DATA"
    local pwfile="$PG_HOME/.pw"
    echo dte >"$pwfile"
    [ "$(id -u)" = 0 ] && chown postgres: "$pwfile"
    if ! as_pg_owner "$bin/initdb" -D "$PG_DATA" -U dte --pwfile="$pwfile" -E UTF8 --no-locale \
      --auth-host=scram-sha-256 --auth-local=trust >"$PG_HOME/initdb.log" 2>&1; then
      rm -f "$pwfile"
      fail postgres "$PG_HOME/initdb.log" "initdb failed"
      return 1
    fi
    rm -f "$pwfile"
  fi
  say "postgres: starting on 127.0.0.1:$PG_PORT"
  if ! as_pg_owner "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories='' -c max_connections=200 -c shared_buffers=64MB" \
    >"$PG_HOME/pg_ctl.log" 2>&1; then
    cat "$PG_HOME/pg_ctl.log" >>"$PG_LOG" 2>/dev/null
    fail postgres "$PG_LOG" "pg_ctl start failed"
    return 1
  fi
  head -n 1 "$PG_DATA/postmaster.pid" >"$(pid_file postgres)"
  ln -sf "$PG_LOG" "$LOG_DIR/postgres.log"
  if ! PGPASSWORD=dte "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U dte -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'dte'" | grep -q 1; then
    PGPASSWORD=dte "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U dte dte >>"$PG_LOG" 2>&1 ||
      { fail postgres "$PG_LOG" "could not create database dte"; return 1; }
  fi
  wait_until 30 pg_ready || { fail postgres "$PG_LOG" "not accepting connections to dte after 30s"; return 1; }
  say "postgres: ready in $(($(now_ms) - t0)) ms (pid $(cat "$(pid_file postgres)"), log $PG_LOG)"
}

pg_down() {
  local pid
  pid="$(running_pid postgres)" || return 0
  if as_pg_owner "$(pg_bin)/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1; then
    rm -f "$(pid_file postgres)"
    say "postgres stopped (pid $pid)"
  else
    stop_pid postgres 30
  fi
}

pg_status() {
  if [ -n "${DATABASE_URL:-}" ]; then
    echo "postgres  external   $DATABASE_URL (DATABASE_URL)"
  elif pid="$(running_pid postgres)"; then
    echo "postgres  running    $LOCAL_DATABASE_URL  pid $pid"
  elif port_open "$PG_PORT"; then
    echo "postgres  foreign    127.0.0.1:$PG_PORT answers, not started by this checkout"
  else
    echo "postgres  stopped    (would listen on 127.0.0.1:$PG_PORT)"
  fi
}
