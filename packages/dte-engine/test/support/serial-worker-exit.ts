/**
 * A process whose only work is one job of a SerialWorker (test/serial-worker.test.ts runs it as a
 * child): it must wait for the answer, print it, and then exit on its own (an idle worker holds
 * nothing open).
 */
import { SerialWorker } from '../../src';
import { testJob } from './serial-jobs';

const worker = new SerialWorker({
  handler: { module: require.resolve('./serial-jobs'), fn: testJob },
  name: 'test',
  heapMb: 64,
  queueMax: 4,
  busy: () => new Error('busy'),
  timedOut: (ms) => new Error(`took longer than ${ms} ms`),
});

void worker.run({ spin: 'answered', ms: 200 }, { timeoutMs: 10_000 }).then((r) => {
  console.log(JSON.stringify(r));
});
