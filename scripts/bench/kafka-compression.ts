/**
 * Producer compression on the outbox relay's produce path, against the local broker.
 *
 * What is sent is what the relay sends for each POST /dtes: an EmitDteCommand to dte.commands and
 * a DteStatusChanged (`queued`) to dte-status, keyed by the document id, with the relay's headers,
 * Avro-encoded by @dte/messaging's SchemaCatalog against the real registry (so sizes and
 * redundancy are those of production messages, not random bytes). The producer is configured as
 * AvroProducer is (idempotent, one request in flight, acks all, Java-compatible partitioner) and
 * sends ROUNDS produce requests of BATCH documents (2 × BATCH messages, two topics, one
 * `sendBatch` as the relay's round), each awaited before the next. Values are encoded before the
 * clock starts: only producing is measured.
 *
 * Per codec: msg/s; CPU ms per 1 000 messages of this process and of the broker; bytes on the
 * wire (what this process wrote to its sockets while producing: /proc/self/io wchar, i.e. the
 * Produce requests; nothing else writes then); bytes the broker appended to the topics' log
 * segments (the .log files under its log.dirs); then the CPU a consumer group (configured as the
 * signer's and projector's) spends reading them back, decompression included. Run:
 *
 *   npx tsx scripts/bench/kafka-compression.ts   # CODECS=none,gzip,snappy,lz4,zstd ROUNDS=40 BATCH=500 REPEAT=1
 *
 * gzip is built into kafkajs. The other codecs are plug-ins, NOT dependencies of the repository;
 * install them for the run only (a codec that is absent is skipped with a message):
 *
 *   npm install --no-save kafkajs-snappy @2l/kafkajs-lz4 zstd-napi@0.0.6
 *   (cd node_modules/zstd-napi && npx node-gyp rebuild)   # npm does not run its build script unapproved
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import path from 'node:path';
import {
  CompressionCodecs,
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel,
  type Message,
  type Producer,
} from 'kafkajs';
import { DEFAULT_SCHEMA_DIR, PIPELINE_SCHEMAS, PIPELINE_TOPICS, SchemaCatalog } from '@dte/messaging';
import { testStack } from '../../test/support/env';
import { cpuSecondsOf, pidListeningOn } from './process-cpu';
import { runMain } from './run-main';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const BATCH = Number(process.env.BATCH ?? 500);
const REPEAT = Number(process.env.REPEAT ?? 1);
const CODECS = (process.env.CODECS ?? 'none,gzip,snappy,lz4,zstd').split(',');
const PARTITIONS = 2;
const MESSAGES = ROUNDS * BATCH * 2;

const TYPES: Record<string, CompressionTypes> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

/** Registers the plug-in codec of `name` with kafkajs; false (and why) when it is not installed. */
function registerCodec(name: string): string | null {
  /* eslint-disable @typescript-eslint/no-require-imports */
  try {
    if (name === 'snappy') {
      CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy');
      return 'kafkajs-snappy (snappyjs, pure JS)';
    }
    if (name === 'lz4') {
      const Lz4 = require('@2l/kafkajs-lz4') as new () => { codec: () => unknown };
      CompressionCodecs[CompressionTypes.LZ4] = new Lz4().codec as never;
      return '@2l/kafkajs-lz4 (lz4-napi, prebuilt binary)';
    }
    if (name === 'zstd') {
      // the kafkajs zstd plug-ins do not load (@kafkajs/zstd: its cppzst fails to build;
      // @sensejs/kafkajs-zstd-support 0.11.0: its dist throws "__importDefault is not defined"),
      // so zstd-napi's (de)compressor is handed to kafkajs here, as those plug-ins do
      const zstd = require('zstd-napi') as {
        Compressor: new () => { compress(b: Buffer): Buffer };
        Decompressor: new () => { decompress(b: Buffer): Buffer };
      };
      CompressionCodecs[CompressionTypes.ZSTD] = () => {
        const c = new zstd.Compressor();
        const d = new zstd.Decompressor();
        return {
          compress: async (encoder: { buffer: Buffer }) => c.compress(encoder.buffer),
          decompress: async (buffer: Buffer) => d.decompress(buffer),
        };
      };
      return 'zstd-napi 0.0.6 (node-gyp build), level 3';
    }
  } catch (err) {
    console.log(`  ${name}: codec not installed (${(err as Error).message.split('\n')[0]}); skipped`);
    return null;
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  return 'built into kafkajs';
}

/** The broker's log.dirs, read from the server.properties its command line names. */
function brokerLogDirs(pid: number | undefined): string[] {
  if (!pid) return [];
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const props = readFileSync(args[args.length - 1]!, 'utf8');
    const line = props.split('\n').find((l) => /^log\.dirs?=/.test(l.trim()));
    return line ? line.split('=')[1]!.trim().split(',') : [];
  } catch {
    return [];
  }
}

/** Bytes of the .log segment files of the topics' partitions (undefined: log dir not readable). */
function logBytes(dirs: string[], topics: string[]): number | undefined {
  if (dirs.length === 0) return undefined;
  let total = 0;
  for (const dir of dirs) {
    for (const entry of readdirSync(dir)) {
      if (!topics.some((t) => entry.startsWith(`${t}-`))) continue;
      for (const f of readdirSync(path.join(dir, entry)))
        if (f.endsWith('.log')) total += statSync(path.join(dir, entry, f)).size;
    }
  }
  return total;
}

/** The relay's two messages for one accepted document, encoded with the registry's schema ids. */
async function relayMessages(
  schemas: SchemaCatalog,
  topics: { commands: string; status: string },
  n: number,
): Promise<{ commands: Message[]; status: Message[] }> {
  const cmdId = await schemas.idFor(topics.commands, PIPELINE_SCHEMAS[PIPELINE_TOPICS.commands]);
  const stId = await schemas.idFor(topics.status, PIPELINE_SCHEMAS[PIPELINE_TOPICS.status]);
  const organization = randomUUID();
  const company = randomUUID();
  const cert = randomUUID();
  const caf = randomUUID();
  const commands: Message[] = [];
  const status: Message[] = [];
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    const at = new Date(t0 + i * 7).toISOString();
    const headers = { 'x-dte-id': id, 'x-request-id': randomUUID() };
    commands.push({
      key: id,
      headers,
      value: await schemas.encode(cmdId, {
        event_id: randomUUID(),
        dte_id: id,
        organization_id: organization,
        company_id: company,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: 1000 + i,
        certificate_id: cert,
        caf_id: caf,
        requested_at: at,
      }),
    });
    status.push({
      key: id,
      headers: { 'x-dte-id': id },
      value: await schemas.encode(stId, {
        event_id: randomUUID(),
        dte_id: id,
        organization_id: organization,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: 1000 + i,
        sii_status: 'queued',
        sii_glosa: null,
        track_id: null,
        observed_at: at,
        imported: false,
        source: 'api',
      }),
    });
  }
  return { commands, status };
}

/**
 * CPU seconds this process spends reading `count` messages of the topics from the beginning with
 * a consumer group as the signer's and projector's (eachBatch, minBytes 16 KiB, maxWait 50 ms).
 */
async function consumeAll(kafka: Kafka, topics: string[], count: number): Promise<number> {
  const consumer = kafka.consumer({
    groupId: `bench-kz-${randomUUID()}`,
    minBytes: 16384,
    maxWaitTimeInMs: 50,
  });
  const c0 = cpuSecondsOf(process.pid) ?? 0; // the group join is counted (the same for every codec)
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachBatch: async ({ batch }) => {
          seen += batch.messages.length;
          if (seen >= count) resolve();
        },
      })
      .catch(reject);
  });
  const used = (cpuSecondsOf(process.pid) ?? 0) - c0;
  await consumer.disconnect();
  return used;
}

/** Bytes this process wrote with write(2)/writev(2), sockets included (/proc/self/io wchar): the producer's requests. */
function bytesWritten(): number {
  const m = /^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const recordBytes = (m: Message) =>
  (m.value as Buffer).length +
  String(m.key).length +
  Object.entries(m.headers ?? {}).reduce((s, [k, v]) => s + k.length + String(v).length, 0);

async function main(): Promise<void> {
  const stack = await testStack();
  const brokers = stack.kafkaBrokers;
  const brokerPid = pidListeningOn(Number(brokers[0]!.split(':')[1]));
  const logDirs = brokerLogDirs(brokerPid);
  const kafka = new Kafka({ clientId: `bench-kz-${randomUUID()}`, brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const schemas = new SchemaCatalog(stack.schemaRegistryUrl, DEFAULT_SCHEMA_DIR);
  const prefix = `bench-kz-${randomUUID().slice(0, 8)}`;

  // one set of documents, encoded once, sent by every codec (each to topics of its own)
  const sample = await relayMessages(
    schemas,
    { commands: `${prefix}-sample.commands`, status: `${prefix}-sample.status` },
    ROUNDS * BATCH,
  );
  const all = [...sample.commands, ...sample.status];
  const raw = all.reduce((s, m) => s + recordBytes(m), 0);
  const avgValue = (list: Message[]) =>
    list.reduce((s, m) => s + (m.value as Buffer).length, 0) / list.length;
  console.log(
    `[kafka-compression] kafkajs 2.2.4, producer as AvroProducer (idempotent, maxInFlightRequests 1, acks all, DefaultPartitioner);` +
      ` ${ROUNDS} sendBatch rounds of ${BATCH} documents = ${BATCH * 2} messages (dte.commands + dte-status, ${PARTITIONS} partitions each), ${MESSAGES} messages per run, ${REPEAT} run(s) per codec;` +
      ` Avro values ${avgValue(sample.commands).toFixed(0)} B (command) / ${avgValue(sample.status).toFixed(0)} B (status), key 36 B, headers ${(raw / all.length - avgValue(all) - 36).toFixed(0)} B on average;` +
      ` broker ${brokers[0]} (pid ${brokerPid ?? '?'}, log dirs ${logDirs.join(',') || 'not readable'}); load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    '  codec    library                                       msg/s   client CPU ms/1000   broker CPU ms/1000   wire B/msg   log B/msg   wire vs none   consumer CPU ms/1000 (incl. join)',
  );
  let wireNone: number | undefined;
  const libraries = new Map<string, string>();
  for (const codec of CODECS) {
    if (TYPES[codec] === undefined) throw new Error(`unknown codec ${codec} (none, gzip, snappy, lz4, zstd)`);
    const library = registerCodec(codec);
    if (library) libraries.set(codec, library);
  }
  try {
    // the codecs take turns run after run, so a warming JIT or a busier minute does not favour one
    for (let run = 0; run < REPEAT; run++) {
      for (const [codec, library] of libraries) {
        const type = TYPES[codec]!;
        const topics = {
          commands: `${prefix}-${codec}-${run}.commands`,
          status: `${prefix}-${codec}-${run}.status`,
        };
        for (let attempt = 1; ; attempt++) {
          try {
            await admin.createTopics({
              topics: [topics.commands, topics.status].map((topic) => ({ topic, numPartitions: PARTITIONS })),
              waitForLeaders: true,
            });
            break;
          } catch (err) {
            // a busy broker can answer the leader check before the partitions exist: ask again
            if (attempt >= 3) throw err;
          }
        }
        const producer: Producer = kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          createPartitioner: Partitioners.DefaultPartitioner,
        });
        await producer.connect();
        try {
          // warm-up: connections, metadata, the codec's first call (not measured, not counted)
          await producer.sendBatch({
            acks: -1,
            compression: type,
            topicMessages: [
              { topic: topics.commands, messages: sample.commands.slice(0, 10) },
              { topic: topics.status, messages: sample.status.slice(0, 10) },
            ],
          });
          const log0 = logBytes(logDirs, [topics.commands, topics.status]);
          const c0 = cpuSecondsOf(process.pid) ?? 0;
          const b0 = brokerPid ? (cpuSecondsOf(brokerPid) ?? 0) : 0;
          const w0 = bytesWritten();
          const t0 = process.hrtime.bigint();
          for (let r = 0; r < ROUNDS; r++) {
            await producer.sendBatch({
              acks: -1,
              compression: type,
              topicMessages: [
                { topic: topics.commands, messages: sample.commands.slice(r * BATCH, (r + 1) * BATCH) },
                { topic: topics.status, messages: sample.status.slice(r * BATCH, (r + 1) * BATCH) },
              ],
            });
          }
          const wall = Number(process.hrtime.bigint() - t0) / 1e9;
          const wire = bytesWritten() - w0;
          const own = (cpuSecondsOf(process.pid) ?? 0) - c0;
          const brk = brokerPid ? (cpuSecondsOf(brokerPid) ?? 0) - b0 : NaN;
          const log1 = logBytes(logDirs, [topics.commands, topics.status]);
          const perK = (s: number) => ((s * 1e6) / MESSAGES).toFixed(1);
          if (codec === 'none' && run === 0) wireNone = wire;
          const logPerMsg =
            log0 !== undefined && log1 !== undefined ? ((log1 - log0) / MESSAGES).toFixed(0) : 'n/a';
          // the consumers' side (signer, projector, webhooks): read it all back, decompressing
          const consumed = await consumeAll(kafka, [topics.commands, topics.status], MESSAGES + 20);
          console.log(
            `  ${codec.padEnd(8)} ${library.padEnd(44)} ${(MESSAGES / wall).toFixed(0).padStart(6)}   ${perK(own).padStart(18)}   ${perK(brk).padStart(18)}   ${(wire / MESSAGES).toFixed(0).padStart(10)}   ${logPerMsg.padStart(9)}   ${(wireNone ? `${((100 * wire) / wireNone).toFixed(0)} %` : '—').padStart(12)}   ${perK(consumed).padStart(19)}`,
          );
        } finally {
          await producer.disconnect();
          await admin.deleteTopics({ topics: [topics.commands, topics.status] }).catch(() => undefined);
        }
      }
    }
  } finally {
    // whatever a failed run left behind
    const left = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (left.length > 0) await admin.deleteTopics({ topics: left }).catch(() => undefined);
    // the sample's registry subjects (the codec runs used the same ids, through the sample's subjects)
    for (const topic of [`${prefix}-sample.commands`, `${prefix}-sample.status`]) {
      const url = `${stack.schemaRegistryUrl}/subjects/${encodeURIComponent(`${topic}-value`)}`;
      await fetch(url, { method: 'DELETE' }).catch(() => undefined);
      await fetch(`${url}?permanent=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  }
  console.log(
    `  uncompressed record content (value + key + headers): ${(raw / all.length).toFixed(0)} B/msg; load at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await admin.disconnect();
}

runMain(main);
