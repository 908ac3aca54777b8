/**
 * Idle long-poll: a consumer whose fetch came back empty asks next for ONE byte with a long wait
 * (`idleWaitTimeInMs`), so an idle consumer sends one fetch per idle wait instead of one per
 * `maxWaitTimeInMs`, and the first record after a pause is handed over at once; as soon as a
 * fetch brings records it asks again with its own `minBytes`/`maxWaitTimeInMs` (the batching
 * under load is unchanged).
 *
 * Why: every Kafka request costs the broker about 1 ms of CPU on the 2-core machine whatever its
 * kind (scripts/bench/kafka-request-cost.ts), and the pipeline's consumers wait 50-200 ms for
 * 16-32 KiB, so between bursts each of them polled 5-20 times a second for nothing (ARCHITECTURE
 * "Kafka broker CPU").
 *
 * kafkajs (2.2.4, the last release) has no per-fetch setting, so this wraps its ConsumerGroup's
 * `fetch` (the one place that reads `minBytes` and `maxWaitTime` for a fetch request). Only
 * groups an AvroConsumer registered are touched; if kafkajs' internals are not as expected the
 * wrapper is not installed and consumers fetch as configured (`idleFetchInstalled` says which; a
 * test asserts it is).
 */
/** the fetch parameters of one consumer group in this process */
export interface IdleFetchPolicy {
  minBytes: number;
  maxWaitTimeInMs: number;
  idleWaitTimeInMs: number;
  /** set while the consumer is paused (kafkajs sleeps maxWaitTime then: keep it short) */
  paused: boolean;
}

interface GroupLike {
  groupId: string;
  minBytes: number;
  maxWaitTime: number;
  [IDLE]?: boolean;
}

interface BatchLike {
  isEmpty(): boolean;
}

const IDLE = Symbol('dte.idleFetch');
const policies = new Map<string, IdleFetchPolicy[]>();

function install(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup') as {
      prototype: { fetch?: (nodeId: number) => Promise<BatchLike[]> };
    };
    const original = ConsumerGroup.prototype.fetch;
    if (typeof original !== 'function') return false;
    ConsumerGroup.prototype.fetch = async function (this: GroupLike, nodeId: number) {
      const policy = policies.get(this.groupId)?.[0];
      if (!policy) return original.call(this, nodeId);
      const idle = this[IDLE] === true && !policies.get(this.groupId)!.some((p) => p.paused);
      this.minBytes = idle ? 1 : policy.minBytes;
      this.maxWaitTime = idle ? policy.idleWaitTimeInMs : policy.maxWaitTimeInMs;
      const batches = await original.call(this, nodeId);
      this[IDLE] = batches.every((b) => b.isEmpty());
      return batches;
    };
    return true;
  } catch {
    return false;
  }
}

/** whether kafkajs' fetch is wrapped (false: every fetch uses the configured parameters) */
export const idleFetchInstalled = install();

/** applies `policy` to the consumer group `groupId` of this process until the returned function is called */
export function registerIdleFetch(groupId: string, policy: IdleFetchPolicy): () => void {
  const list = policies.get(groupId) ?? [];
  list.push(policy);
  policies.set(groupId, list);
  return () => {
    const left = (policies.get(groupId) ?? []).filter((p) => p !== policy);
    if (left.length > 0) policies.set(groupId, left);
    else policies.delete(groupId);
  };
}
