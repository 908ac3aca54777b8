# The schema registry of the local stack (sourced by scripts/stack.sh): Apicurio Registry 3.0.9,
# a Quarkus application published on Maven Central as a tar.gz, serving the Confluent-compatible
# API under /apis/ccompat/v7. Its storage is an H2 file under .stack/registry, so ids of schemas
# survive restarts (Kafka keeps messages that carry them).
#
# Why 3.0.9: 3.3.x is compiled for Java 21 and Debian 12 ships Java 17. 3.0.9's parent POM is
# missing from Maven Central, so `dependency:get` fails on the artifact descriptor; the tar.gz
# itself is there and is fetched by path with the wagon plugin.

REGISTRY_VERSION=3.0.9
REGISTRY_DIST="$CACHE_DIR/apicurio/$REGISTRY_VERSION"
REGISTRY_HOME="$STACK_DIR/registry"
REGISTRY_LOG="$LOG_DIR/registry.log"
REGISTRY_API_PATH=/apis/ccompat/v7
LOCAL_SCHEMA_REGISTRY_URL="http://127.0.0.1:$REGISTRY_PORT$REGISTRY_API_PATH"

registry_fetch() {
  local jar="$REGISTRY_DIST/apicurio-registry-app-$REGISTRY_VERSION-runner.jar"
  [ -f "$REGISTRY_DIST/.complete" ] && [ -f "$jar" ] && return 0
  ensure_debian_package openjdk-17-jre-headless java_bin || return 1
  ensure_debian_package maven mvn_bin || return 1
  local tgz="$CACHE_DIR/apicurio/apicurio-registry-app-$REGISTRY_VERSION-all.tar.gz"
  mkdir -p "$CACHE_DIR/apicurio"
  if [ ! -f "$tgz" ]; then
    say "registry: fetching io.apicurio:apicurio-registry-app:$REGISTRY_VERSION:tar.gz:all from Maven Central"
    if ! mvn -q -B -Dmaven.repo.local="$CACHE_DIR/m2" org.codehaus.mojo:wagon-maven-plugin:2.0.2:download-single \
      -Dwagon.url=https://repo.maven.apache.org/maven2 \
      -Dwagon.fromFile="io/apicurio/apicurio-registry-app/$REGISTRY_VERSION/apicurio-registry-app-$REGISTRY_VERSION-all.tar.gz" \
      -Dwagon.toFile="$tgz.part" >"$LOG_DIR/mvn-registry.log" 2>&1; then
      rm -f "$tgz.part"
      fail registry "$LOG_DIR/mvn-registry.log" "mvn could not fetch the Apicurio Registry distribution"
      return 1
    fi
    mv "$tgz.part" "$tgz"
  fi
  rm -rf "$REGISTRY_DIST"
  mkdir -p "$REGISTRY_DIST"
  tar -xzf "$tgz" -C "$REGISTRY_DIST" || { fail registry "" "cannot unpack $tgz"; return 1; }
  [ -f "$jar" ] || { fail registry "" "$jar is not in the distribution"; return 1; }
  touch "$REGISTRY_DIST/.complete"
}

registry_ready() { curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$REGISTRY_PORT$REGISTRY_API_PATH/subjects" 2>/dev/null; }

registry_up() {
  if [ -n "${SCHEMA_REGISTRY_URL:-}" ]; then
    say "registry: SCHEMA_REGISTRY_URL is set; using it, not starting one"
    return 0
  fi
  local pid t0
  if pid="$(running_pid registry)"; then
    say "registry: already running (pid $pid) on $LOCAL_SCHEMA_REGISTRY_URL, reused"
    return 0
  fi
  if port_open "$REGISTRY_PORT"; then
    if registry_ready; then
      say "registry: $LOCAL_SCHEMA_REGISTRY_URL answers but was not started by this checkout; reused (down leaves it)"
      return 0
    fi
    fail registry "" "port $REGISTRY_PORT is taken by something that does not serve $REGISTRY_API_PATH"
    return 1
  fi
  t0="$(now_ms)"
  registry_fetch || return 1
  mkdir -p "$REGISTRY_HOME"
  say "registry: starting Apicurio Registry $REGISTRY_VERSION on $LOCAL_SCHEMA_REGISTRY_URL"
  # Canonical hashing makes a lookup by schema text insensitive to formatting, as Confluent's is.
  setsid java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dquarkus.http.access-log.enabled=false -Dquarkus.log.level=INFO \
    -Dapicurio.datasource.url="jdbc:h2:file:$REGISTRY_HOME/registry;DB_CLOSE_ON_EXIT=FALSE" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=10 \
    -Dapicurio.ccompat.use-canonical-hash=true -Dapicurio.ccompat.max-subjects=100000 \
    -jar "$REGISTRY_DIST/apicurio-registry-app-$REGISTRY_VERSION-runner.jar" \
    </dev/null >"$REGISTRY_LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$(pid_file registry)"
  local deadline=$(($(date +%s) + 90))
  until registry_ready; do
    if ! alive "$pid"; then
      rm -f "$(pid_file registry)"
      fail registry "$REGISTRY_LOG" "the registry exited during start-up"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      fail registry "$REGISTRY_LOG" "not answering after 90s (still running as pid $pid; scripts/stack.sh down stops it)"
      return 1
    fi
    sleep 0.2
  done
  # Confluent's default: new versions of a subject must be able to read data written with the old.
  curl -fsS -m 5 -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
    --data '{"compatibility":"BACKWARD"}' "$LOCAL_SCHEMA_REGISTRY_URL/config" >/dev/null ||
    { fail registry "$REGISTRY_LOG" "could not set the global compatibility to BACKWARD"; return 1; }
  say "registry: ready in $(($(now_ms) - t0)) ms (pid $pid, log $REGISTRY_LOG)"
}

registry_down() { stop_pid registry 20; }

registry_status() {
  if [ -n "${SCHEMA_REGISTRY_URL:-}" ]; then
    echo "registry  external   $SCHEMA_REGISTRY_URL (SCHEMA_REGISTRY_URL)"
  elif pid="$(running_pid registry)"; then
    echo "registry  running    $LOCAL_SCHEMA_REGISTRY_URL (Apicurio $REGISTRY_VERSION)  pid $pid"
  elif port_open "$REGISTRY_PORT"; then
    echo "registry  foreign    127.0.0.1:$REGISTRY_PORT answers, not started by this checkout"
  else
    echo "registry  stopped    (would listen on $LOCAL_SCHEMA_REGISTRY_URL)"
  fi
}
