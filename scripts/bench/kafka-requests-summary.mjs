// Sums the files kafka-requests.mjs wrote (one per service process) and prints them per document:
//   node scripts/bench/kafka-requests-summary.mjs /tmp/kr 4000
// (DOCS: every document the run POSTed, warm-up included, since the counts cover the whole run.)
import fs from 'node:fs';
import path from 'node:path';

const [dir, docsArg] = process.argv.slice(2);
const docs = Number(docsArg);
if (!dir || !(docs > 0)) {
  console.error('usage: kafka-requests-summary.mjs DIR DOCS');
  process.exit(2);
}
const logical = (t) => t.replace(/^.*?(dte[.-])/, '$1');
const per = (n) => (n / docs).toFixed(3);
const totals = new Map();
const topics = new Map();
for (const f of fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const { requests, produced, fetched } = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const service = f.replace(/-\d+\.json$/, '');
  const main = ['Produce', 'Fetch', 'OffsetCommit', 'Heartbeat'];
  const other = Object.entries(requests)
    .filter(([k]) => !main.includes(k))
    .reduce((s, [, v]) => s + v, 0);
  console.log(
    `${service.padEnd(14)} per doc: ${main.map((k) => `${k} ${per(requests[k] ?? 0)}`).join(', ')}, other ${per(other)}; ` +
      `fetches empty ${fetched.empty}/${fetched.requests}, fetched msgs ${per(fetched.messages)}`,
  );
  for (const [k, v] of Object.entries(requests)) totals.set(k, (totals.get(k) ?? 0) + v);
  for (const [t, p] of Object.entries(produced)) {
    const e = topics.get(logical(t)) ?? { messages: 0, bytes: 0, partitionBatches: 0 };
    e.messages += p.messages;
    e.bytes += p.bytes;
    e.partitionBatches += p.partitionBatches;
    topics.set(logical(t), e);
  }
}
console.log(
  `all requests per doc: ${[...totals].map(([k, v]) => `${k} ${per(v)}`).join(', ')}; total ${per([...totals.values()].reduce((a, b) => a + b, 0))}`,
);
for (const [t, e] of [...topics].sort())
  console.log(
    `produced ${t.padEnd(22)} ${per(e.messages)} msgs/doc, ${(e.bytes / Math.max(1, e.messages)).toFixed(0)} B/msg (key+value), ${(e.messages / Math.max(1, e.partitionBatches)).toFixed(1)} msgs per partition batch`,
  );
