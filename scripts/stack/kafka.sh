# Kafka 3.9 of the local stack (sourced by scripts/stack.sh): a single KRaft node (broker and
# controller in one JVM) run from Maven Central jars that scripts/maven/kafka-pom.xml lists.

KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/scripts/maven/kafka-pom.xml")"
KAFKA_LIBS="$CACHE_DIR/kafka/libs"
KAFKA_HOME="$STACK_DIR/kafka"
KAFKA_LOG="$LOG_DIR/kafka.log"
KAFKA_HEAP="${KAFKA_HEAP:--Xms128m -Xmx512m}"

java_bin() { command -v java; }
mvn_bin() { command -v mvn; }

# Copy the broker's jars and their dependencies into .cache/kafka/libs (once per version).
kafka_fetch() {
  local stamp="$KAFKA_LIBS/.complete-$KAFKA_VERSION"
  [ -f "$stamp" ] && return 0
  ensure_debian_package openjdk-17-jre-headless java_bin || return 1
  ensure_debian_package maven mvn_bin || return 1
  say "kafka: fetching kafka_2.13:$KAFKA_VERSION and its dependencies from Maven Central into $KAFKA_LIBS"
  rm -rf "$KAFKA_LIBS"
  mkdir -p "$KAFKA_LIBS"
  if ! mvn -q -B -f "$ROOT/scripts/maven/kafka-pom.xml" -Dmaven.repo.local="$CACHE_DIR/m2" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS" \
    >"$LOG_DIR/mvn-kafka.log" 2>&1; then
    fail kafka "$LOG_DIR/mvn-kafka.log" "mvn could not fetch the Kafka jars"
    return 1
  fi
  touch "$stamp"
}

KAFKA_JVM_FLAGS=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
  -Dlog4j.configuration="file:$KAFKA_HOME/log4j.properties" -Dkafka.logs.dir="$LOG_DIR")

# The storage tool: a short-lived JVM with a small heap.
kafka_tool() { java -Xmx256m "${KAFKA_JVM_FLAGS[@]}" -cp "$KAFKA_LIBS/*" "$@"; }

kafka_write_config() {
  mkdir -p "$KAFKA_HOME/data"
  cat >"$KAFKA_HOME/server.properties" <<CONF
# Written by scripts/stack/kafka.sh on every start. One node is broker and controller (KRaft).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_HOME/data
# A single node: every replication factor and min.insync.replicas must be 1.
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
# Topics are created by the project (ensureTopics) with explicit partitions and configs.
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
# Threads and timers sized for a 2-core dev machine (issue 13, ARCHITECTURE "Kafka broker CPU"):
# each request hops from a network thread to an io thread and back, and every extra thread is one
# more to wake on 2 shared cores; the controller's no-op metadata record (KIP-835, every 500 ms
# by default: a raft append and a metadata publish, the largest part of the idle broker's CPU)
# only detects stale brokers, of which a single node has none.
num.network.threads=${KAFKA_NETWORK_THREADS:-1}
num.io.threads=${KAFKA_IO_THREADS:-2}
metadata.max.idle.interval.ms=${KAFKA_METADATA_IDLE_MS:-5000}
log.retention.hours=168
CONF
  cat >"$KAFKA_HOME/log4j.properties" <<'CONF'
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/kafka.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.kafka.controller=INFO
CONF
}

kafka_started() { grep -q 'Kafka Server started' "$KAFKA_LOG" 2>/dev/null && port_open "$KAFKA_PORT"; }

kafka_up() {
  if [ -n "${KAFKA_BROKERS:-}" ]; then
    say "kafka: KAFKA_BROKERS is set; using it, not starting one"
    return 0
  fi
  local pid t0
  if pid="$(running_pid kafka)"; then
    say "kafka: already running (pid $pid) on 127.0.0.1:$KAFKA_PORT, reused"
    return 0
  fi
  if port_open "$KAFKA_PORT"; then
    say "kafka: 127.0.0.1:$KAFKA_PORT answers but was not started by this checkout; reused (down leaves it)"
    return 0
  fi
  if port_open "$KAFKA_CONTROLLER_PORT"; then
    fail kafka "" "controller port $KAFKA_CONTROLLER_PORT is taken by something else"
    return 1
  fi
  t0="$(now_ms)"
  kafka_fetch || return 1
  kafka_write_config
  : >"$KAFKA_LOG"
  if [ ! -f "$KAFKA_HOME/data/meta.properties" ]; then
    # A random cluster id: 16 bytes, URL-safe base64 without padding (Kafka's Uuid format).
    local cluster_id
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    say "kafka: formatting storage (cluster $cluster_id)"
    # --cluster-id=ID as one argument: an id that starts with '-' (1 in 64) would be read as an option
    if ! kafka_tool kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$KAFKA_HOME/server.properties" \
      --ignore-formatted >"$LOG_DIR/kafka-format.log" 2>&1; then
      fail kafka "$LOG_DIR/kafka-format.log" "formatting the storage failed"
      return 1
    fi
  fi
  say "kafka: starting $KAFKA_VERSION on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
  setsid java $KAFKA_HEAP "${KAFKA_JVM_FLAGS[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_HOME/server.properties" \
    </dev/null >"$LOG_DIR/kafka.out" 2>&1 &
  echo $! >"$(pid_file kafka)"
  pid=$!
  local deadline=$(($(date +%s) + 90))
  until kafka_started; do
    if ! alive "$pid"; then
      rm -f "$(pid_file kafka)"
      cat "$LOG_DIR/kafka.out" >>"$KAFKA_LOG"
      fail kafka "$KAFKA_LOG" "the broker exited during start-up"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      fail kafka "$KAFKA_LOG" "not started after 90s (still running as pid $pid; scripts/stack.sh down stops it)"
      return 1
    fi
    sleep 0.3
  done
  say "kafka: ready in $(($(now_ms) - t0)) ms (pid $pid, log $KAFKA_LOG)"
}

kafka_down() { stop_pid kafka 30; }

kafka_status() {
  if [ -n "${KAFKA_BROKERS:-}" ]; then
    echo "kafka     external   $KAFKA_BROKERS (KAFKA_BROKERS)"
  elif pid="$(running_pid kafka)"; then
    echo "kafka     running    $LOCAL_KAFKA_BROKERS (controller 127.0.0.1:$KAFKA_CONTROLLER_PORT)  pid $pid"
  elif port_open "$KAFKA_PORT"; then
    echo "kafka     foreign    127.0.0.1:$KAFKA_PORT answers, not started by this checkout"
  else
    echo "kafka     stopped    (would listen on 127.0.0.1:$KAFKA_PORT)"
  fi
}
