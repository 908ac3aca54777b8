/**
 * What one Kafka request of each kind the pipeline sends costs the broker in CPU, measured one
 * kind at a time against an otherwise idle broker (a PRIVATE one: the shared broker serves the
 * other test runs, whose requests would be counted too):
 *
 * - idle fetch: a consumer group (the signer's settings: minBytes 16 KiB, maxWaitTimeInMs 50) on a
 *   topic nobody writes, so every fetch waits its maxWait in the broker's purgatory and comes back
 *   empty (what each pipeline consumer does between bursts);
 * - produce: the relay's request, an idempotent acks=all sendBatch of ROUND documents over two
 *   topics of two partitions (a command and four statuses per document, ~300 B each);
 * - fetch with data: a consumer group reading those back (16 KiB / 50 ms);
 * - offset commit: one OffsetCommit of two partitions (the commit pacer's request).
 *
 * Prints broker CPU ms per request of each kind, the broker's idle CPU per second subtracted
 * (measured first), its JIT compiler threads left out. Run:
 *
 *   KAFKA_BROKERS=127.0.0.1:34092 npx tsx scripts/bench/kafka-request-cost.ts   # SECONDS=15 ROUND=8
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { cpuSecondsOf, pidListeningOn } from './process-cpu';

const BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:34092').split(',');
const SECONDS = Number(process.env.SECONDS ?? 15);
const ROUND = Number(process.env.ROUND ?? 8);
const MAX_WAIT = Number(process.env.MAX_WAIT ?? 50);

async function main(): Promise<void> {
  const brokerPid = pidListeningOn(Number(BROKERS[0]!.split(':')[1]));
  if (!brokerPid) throw new Error(`no broker process listens on ${BROKERS[0]}`);
  // the JVM's JIT compiler threads are left out: a freshly started broker compiles for minutes,
  // which a long-running one does not, and it would be charged to whatever kind is measured then
  const jit = () => {
    let s = 0;
    for (const t of fs.readdirSync(`/proc/${brokerPid}/task`)) {
      try {
        if (!/Compiler/.test(fs.readFileSync(`/proc/${brokerPid}/task/${t}/comm`, 'utf8'))) continue;
        const stat = fs.readFileSync(`/proc/${brokerPid}/task/${t}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        s += (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        // the thread ended
      }
    }
    return s;
  };
  const cpu = () => (cpuSecondsOf(brokerPid) ?? 0) - jit();
  const kafka = new Kafka({ clientId: `cost-${randomUUID()}`, brokers: BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const run = randomUUID().slice(0, 8);
  const [idle, cmds, status] = ['idle', 'commands', 'status'].map((t) => `cost-${run}-${t}`) as [
    string,
    string,
    string,
  ];
  await admin.createTopics({
    topics: [idle, cmds, status].map((topic) => ({ topic, numPartitions: 2 })),
    waitForLeaders: true,
  });

  await sleep(2000);
  let c0 = cpu();
  await sleep(SECONDS * 1000);
  const idlePerSec = (cpu() - c0) / SECONDS;
  console.log(
    `[kafka-request-cost] broker pid ${brokerPid} on ${BROKERS[0]}; idle broker ${(idlePerSec * 1000).toFixed(1)} ms CPU/s`,
  );
  const report = (what: string, n: number, cpuS: number, wallS: number) => {
    const net = cpuS - idlePerSec * wallS;
    console.log(
      `  ${what.padEnd(44)} ${String(n).padStart(6)} requests in ${wallS.toFixed(1)} s: ${((net * 1000) / n).toFixed(3)} ms broker CPU per request (${((cpuS * 1000) / n).toFixed(3)} with idle)`,
    );
  };

  /** a consumer with the signer's fetch settings, joined (3 s), that counts its fetches */
  const fetchingConsumer = async (label: string, topic: string, fromBeginning: boolean) => {
    const c = kafka.consumer({ groupId: `cost-${run}-${label}`, minBytes: 16384, maxWaitTimeInMs: MAX_WAIT });
    await c.connect();
    await c.subscribe({ topic, fromBeginning });
    let fetches = 0;
    c.on(c.events.FETCH, () => void (fetches += 1));
    await c.run({ eachBatch: async () => undefined });
    await sleep(3000);
    return { c, fetches: () => fetches };
  };

  // idle fetches
  {
    const { c, fetches } = await fetchingConsumer('idle', idle, true);
    const f0 = fetches();
    c0 = cpu();
    const t0 = Date.now();
    await sleep(SECONDS * 1000);
    report(
      `idle fetch (minBytes 16 KiB, maxWait ${MAX_WAIT} ms)`,
      fetches() - f0,
      cpu() - c0,
      (Date.now() - t0) / 1000,
    );
    await c.disconnect();
  }

  // produce rounds (the relay's request)
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const value = () => randomBytes(300);
  {
    c0 = cpu();
    const t0 = Date.now();
    let n = 0;
    while (Date.now() - t0 < SECONDS * 1000) {
      const ids = Array.from({ length: ROUND }, () => randomUUID());
      await producer.sendBatch({
        acks: -1,
        topicMessages: [
          { topic: cmds, messages: ids.map((key) => ({ key, value: value() })) },
          {
            topic: status,
            messages: ids.flatMap((key) => [1, 2, 3, 4].map(() => ({ key, value: value() }))),
          },
        ],
      });
      n += 1;
      await sleep(20);
    }
    report(
      `produce (${ROUND} docs: ${ROUND * 5} msgs, 4 partitions)`,
      n,
      cpu() - c0,
      (Date.now() - t0) / 1000,
    );
  }

  // fetches with data: read them back while a producer keeps writing (the signer's settings)
  {
    const { c, fetches } = await fetchingConsumer('data', status, false);
    const f0 = fetches();
    c0 = cpu();
    const t0 = Date.now();
    let n = 0;
    while (Date.now() - t0 < SECONDS * 1000) {
      const ids = Array.from({ length: ROUND }, () => randomUUID());
      await producer.send({ acks: -1, topic: status, messages: ids.map((key) => ({ key, value: value() })) });
      n += 1;
      await sleep(20);
    }
    const total = cpu() - c0;
    console.log(
      `  (produce of ${ROUND} msgs, 1 topic, with a consumer reading: ${n} produces + ${fetches() - f0} fetches, ${((total * 1000) / (n + fetches() - f0)).toFixed(3)} ms per request with idle)`,
    );
    await c.disconnect();
  }

  // offset commits and heartbeats
  {
    const c = kafka.consumer({ groupId: `cost-${run}-commit`, maxWaitTimeInMs: 1000 });
    await c.connect();
    await c.subscribe({ topic: cmds, fromBeginning: true });
    let hb: (() => Promise<void>) | undefined;
    await c.run({
      autoCommit: false,
      eachBatch: async ({ heartbeat }) => {
        hb = heartbeat;
      },
    });
    const until = Date.now() + 20_000;
    while (!hb && Date.now() < until) await sleep(100);
    c0 = cpu();
    const t0 = Date.now();
    let n = 0;
    while (Date.now() - t0 < SECONDS * 1000) {
      n += 1;
      await c.commitOffsets([
        { topic: cmds, partition: 0, offset: String(n) },
        { topic: cmds, partition: 1, offset: String(n) },
      ]);
      await sleep(20);
    }
    report('offset commit (2 partitions)', n, cpu() - c0, (Date.now() - t0) / 1000);
    await c.disconnect();
  }
  await producer.disconnect();
  await admin.deleteTopics({ topics: [idle, cmds, status] }).catch(() => undefined);
  await admin.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
