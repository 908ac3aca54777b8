// Preload that counts the Kafka requests a service sends (Produce, Fetch, OffsetCommit,
// Heartbeat …, by kafkajs apiName), and per topic the messages and key+value bytes of its Produce
// requests and the messages its Fetch responses brought (and how many fetches came back empty),
// and writes them to <KAFKA_REQUESTS_DIR>/<service>-<pid>.json when the process exits. Use it
// under the bench:
//   BENCH_ENV_NODE_OPTIONS="--import ./scripts/bench/kafka-requests.mjs" BENCH_ENV_KAFKA_REQUESTS_DIR=/tmp/kr npm run bench:pipeline
// `node scripts/bench/kafka-requests-summary.mjs /tmp/kr DOCS` sums the files per document.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const counts = new Map();
const produced = new Map(); // topic -> { messages, bytes, requests }
const fetched = { requests: 0, empty: 0, messages: 0, byTopic: {} };
const bump = (map, key, n = 1) => map.set(key, (map.get(key) ?? 0) + n);
const size = (b) => (b == null ? 0 : Buffer.isBuffer(b) ? b.length : Buffer.byteLength(String(b)));
try {
  const Connection = require('kafkajs/src/network/connection');
  const original = Connection.prototype.send;
  Connection.prototype.send = function (args) {
    bump(counts, args?.request?.apiName ?? '?');
    return original.call(this, args);
  };
  const Broker = require('kafkajs/src/broker');
  const produce = Broker.prototype.produce;
  Broker.prototype.produce = function (args) {
    for (const { topic, partitions } of args?.topicData ?? []) {
      const t = produced.get(topic) ?? { messages: 0, bytes: 0, partitionBatches: 0 };
      for (const p of partitions) {
        t.partitionBatches += 1;
        for (const m of p.messages) {
          t.messages += 1;
          t.bytes += size(m.key) + size(m.value);
        }
      }
      produced.set(topic, t);
    }
    return produce.call(this, args);
  };
  const fetch = Broker.prototype.fetch;
  Broker.prototype.fetch = async function (args) {
    const response = await fetch.call(this, args);
    fetched.requests += 1;
    let n = 0;
    for (const r of response?.responses ?? [])
      for (const p of r.partitions ?? []) {
        const k = (p.messages ?? []).length;
        n += k;
        fetched.byTopic[r.topicName] = (fetched.byTopic[r.topicName] ?? 0) + k;
      }
    fetched.messages += n;
    if (n === 0) fetched.empty += 1;
    return response;
  };
} catch {
  // no kafkajs in this process
}
process.on('exit', () => {
  const dir = process.env.KAFKA_REQUESTS_DIR;
  if (!dir || counts.size === 0) return;
  const name = path.basename(path.dirname(path.dirname(process.argv[1] ?? 'node')));
  fs.writeFileSync(
    path.join(dir, `${name}-${process.pid}.json`),
    JSON.stringify(
      { requests: Object.fromEntries(counts), produced: Object.fromEntries(produced), fetched },
      null,
      1,
    ),
  );
});
