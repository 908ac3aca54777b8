import type { Admin } from 'kafkajs';

/**
 * The lag of a consumer group on each of its topics (real names), summed over partitions: from
 * the committed offset (the partition's low watermark when the group has committed nothing) to
 * the high watermark. This is what kafka-exporter reports as kafka_consumergroup_lag.
 */
export async function consumerGroupLag(
  admin: Admin,
  groupId: string,
  topics: string[],
): Promise<Map<string, number>> {
  const committed = await admin.fetchOffsets({ groupId, topics });
  const lag = new Map<string, number>();
  for (const t of committed) {
    const ends = await admin.fetchTopicOffsets(t.topic);
    const byPartition = new Map(ends.map((p) => [p.partition, p]));
    let sum = 0n;
    for (const p of t.partitions) {
      const end = byPartition.get(p.partition);
      if (!end) continue;
      const high = BigInt(end.high);
      const from = p.offset === '-1' ? BigInt(end.low) : BigInt(p.offset);
      if (high > from) sum += high - from;
    }
    lag.set(t.topic, Number(sum));
  }
  return lag;
}
