/**
 * What the pipeline costs while nothing happens: starts the api (with its relay and projector),
 * signer, sii-uploader and sii-poller as the bench does, lets them settle, then prints the CPU ms
 * per second of each service and of the Kafka broker over IDLE_SECONDS with no document sent (the
 * fixed costs: consumers' fetch polling, heartbeats, the workers' database polling loops). With
 * the broker a private one (KAFKA_BROKERS), its figure is the pipeline's alone:
 *
 *   KAFKA_BROKERS=127.0.0.1:34092 npx tsx scripts/bench/pipeline-idle.ts    # IDLE_SECONDS=30
 *
 * Add BENCH_ENV_NODE_OPTIONS="--import ./scripts/bench/kafka-requests.mjs"
 * BENCH_ENV_KAFKA_REQUESTS_DIR=<dir> to count each service's Kafka requests too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startPipelineProcesses } from '../../test/support/pipeline-harness';
import { testStack } from '../../test/support/env';
import { cpuSecondsOf, pidListeningOn } from './process-cpu';

const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 30);

async function main(): Promise<void> {
  const stack = await testStack();
  const brokerPid = pidListeningOn(Number(stack.kafkaBrokers[0]!.split(':')[1]));
  const env = Object.fromEntries(
    Object.entries(process.env)
      .filter(([k]) => k.startsWith('BENCH_ENV_'))
      .map(([k, v]) => [k.slice(10), v!]),
  );
  const p = await startPipelineProcesses({ label: 'idle', partitions: 2, env });
  try {
    await sleep(10_000);
    const procs = Object.entries(p.services);
    const before = procs.map(([, s]) => s.cpuSeconds() ?? 0);
    const b0 = brokerPid ? (cpuSecondsOf(brokerPid) ?? 0) : 0;
    await sleep(IDLE_SECONDS * 1000);
    const after = procs.map(([, s]) => s.cpuSeconds() ?? 0);
    const b1 = brokerPid ? (cpuSecondsOf(brokerPid) ?? 0) : 0;
    console.log(`[pipeline-idle] ${IDLE_SECONDS} s with no document, CPU ms per second:`);
    let total = 0;
    procs.forEach(([name], i) => {
      const ms = ((after[i]! - before[i]!) * 1000) / IDLE_SECONDS;
      total += ms;
      console.log(`  ${name.padEnd(14)} ${ms.toFixed(1)}`);
    });
    const broker = ((b1 - b0) * 1000) / IDLE_SECONDS;
    console.log(
      `  ${'kafka broker'.padEnd(14)} ${broker.toFixed(1)} (pid ${brokerPid ?? '?'}, ${stack.kafkaBrokers[0]})`,
    );
    console.log(`  ${'all'.padEnd(14)} ${(total + broker).toFixed(1)}`);
  } finally {
    await p.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
