/**
 * Topic creation: every topic the project uses is declared with explicit partitions and configs
 * and created (or checked) by `ensureTopics`, never auto-created by the broker.
 */
import type { Admin } from 'kafkajs';

export interface TopicSpec {
  /** logical name; the configured prefix is added */
  name: string;
  partitions: number;
  /** broker default when absent (1 on the local single node) */
  replicationFactor?: number;
  /** topic configs, e.g. { 'cleanup.policy': 'compact' } */
  configs?: Record<string, string>;
}

export class TopicMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopicMismatchError';
  }
}

const TOPIC_RESOURCE = 2; // kafkajs ConfigResourceTypes.TOPIC

/**
 * Creates missing topics. An existing topic keeps its data: fewer partitions than declared are
 * added (never removed: more than declared is an error, since keys would move), and configs
 * that differ from the declaration are set to the declared values.
 */
export async function ensureTopicsWith(
  admin: Admin,
  specs: (TopicSpec & { topic: string })[],
): Promise<void> {
  for (const s of specs) {
    if (!Number.isInteger(s.partitions) || s.partitions < 1)
      throw new TopicMismatchError(`topic ${s.topic}: partitions must be a positive integer`);
  }
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((s) => !existing.has(s.topic));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((s) => ({
        topic: s.topic,
        numPartitions: s.partitions,
        replicationFactor: s.replicationFactor ?? -1,
        configEntries: Object.entries(s.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
    });
  }
  const present = specs.filter((s) => existing.has(s.topic));
  if (present.length === 0) return;
  const meta = await admin.fetchTopicMetadata({ topics: present.map((s) => s.topic) });
  for (const s of present) {
    const have = meta.topics.find((t) => t.name === s.topic)?.partitions.length ?? 0;
    if (have > s.partitions)
      throw new TopicMismatchError(
        `topic ${s.topic} has ${have} partitions, more than the ${s.partitions} declared`,
      );
    if (have < s.partitions)
      await admin.createPartitions({ topicPartitions: [{ topic: s.topic, count: s.partitions }] });
  }
  const withConfigs = present.filter((s) => Object.keys(s.configs ?? {}).length > 0);
  if (withConfigs.length === 0) return;
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: withConfigs.map((s) => ({
      type: TOPIC_RESOURCE,
      name: s.topic,
      configNames: Object.keys(s.configs!),
    })),
  });
  for (const s of withConfigs) {
    const entries = described.resources.find((r) => r.resourceName === s.topic)?.configEntries ?? [];
    const differs = Object.entries(s.configs!).some(
      ([name, value]) => entries.find((e) => e.configName === name)?.configValue !== value,
    );
    if (differs) {
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: TOPIC_RESOURCE,
            name: s.topic,
            configEntries: Object.entries(s.configs!).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    }
  }
}

/**
 * The emission pipeline's topics: logical names (the configured KAFKA_TOPIC_PREFIX is added by
 * the messaging handle, which is how tests isolate themselves), the schema of each value
 * (schemas/avro/<schema>.avsc) and the partitions. Every service imports these; nobody spells
 * a topic name elsewhere.
 *
 *   dte.commands  key = document id        EmitDteCommand     api outbox relay -> signer
 *   dte.signed    key = company id + env   DteSigned          signer -> sii-uploader
 *   dte.uploaded  key = upload id          EnvioUploaded      sii-uploader -> sii-poller; also the
 *                                                             api's refresh-status re-poll request
 *                                                             (refresh = true), via its outbox
 *   dte-status    key = document id        DteStatusChanged   everyone -> projector, webhooks, rcv-sync
 *                 (compacted: the latest status of each document stays)
 *   rcv.sync      key = company:env:period RcvSyncRequested   api outbox (POST /rcv) -> rcv-sync
 *                 (one key per period: its commands stay in order on one partition)
 */
export const PIPELINE_TOPICS = {
  commands: 'dte.commands',
  signed: 'dte.signed',
  uploaded: 'dte.uploaded',
  status: 'dte-status',
  rcvSync: 'rcv.sync',
} as const;

export type PipelineTopic = (typeof PIPELINE_TOPICS)[keyof typeof PIPELINE_TOPICS];

/** schema basename (schemas/avro/<name>.avsc) of each pipeline topic's values */
export const PIPELINE_SCHEMAS: Record<PipelineTopic, string> = {
  'dte.commands': 'dte-commands',
  'dte.signed': 'dte-signed',
  'dte.uploaded': 'dte-uploaded',
  'dte-status': 'dte-status',
  'rcv.sync': 'rcv-sync',
};

/** Partitions of each pipeline topic: PIPELINE_PARTITIONS (default 6) unless given per call. */
export function pipelineTopicSpecs(partitions = Number(process.env.PIPELINE_PARTITIONS || 6)): TopicSpec[] {
  return [
    { name: PIPELINE_TOPICS.commands, partitions },
    { name: PIPELINE_TOPICS.signed, partitions },
    { name: PIPELINE_TOPICS.uploaded, partitions },
    {
      name: PIPELINE_TOPICS.status,
      partitions,
      configs: { 'cleanup.policy': 'compact' },
    },
    { name: PIPELINE_TOPICS.rcvSync, partitions },
  ];
}

/** The key of an rcv.sync command: one writer per (company, environment, period). */
export function rcvSyncKey(companyId: string, siiEnv: 'cert' | 'prod', periodo: string): string {
  return `${companyId}:${siiEnv}:${periodo}`;
}

/** The key of a dte.signed record: one uploader instance groups each company's documents per env. */
export function signedKey(companyId: string, siiEnv: 'cert' | 'prod'): string {
  return `${companyId}:${siiEnv}`;
}
