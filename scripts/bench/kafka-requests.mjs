// Preload that counts the Kafka requests a service sends (Produce, Fetch, OffsetCommit,
// Heartbeat …, by kafkajs apiName) and the messages in its Produce requests, and writes them to
// <KAFKA_REQUESTS_DIR>/<service>-<pid>.json when the process exits. Use it under the bench:
//   BENCH_ENV_NODE_OPTIONS="--import ./scripts/bench/kafka-requests.mjs" BENCH_ENV_KAFKA_REQUESTS_DIR=/tmp/kr npm run bench:pipeline
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const counts = new Map();
try {
  const Connection = require('kafkajs/src/network/connection');
  const original = Connection.prototype.send;
  Connection.prototype.send = function (args) {
    const name = args?.request?.apiName ?? '?';
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.call(this, args);
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
    JSON.stringify(Object.fromEntries(counts), null, 1),
  );
});
