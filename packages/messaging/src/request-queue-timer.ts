/**
 * kafkajs 2.2.4 (its last release) re-arms a timer in every broker connection's request queue
 * whenever it has checked that queue, even when nothing waits in it: with no client-side throttle
 * the delay is negative, so each connection of every process runs a ~1 ms timer loop for as long
 * as it is open, loaded or idle (kafkajs issue #1556, still open). Measured here with
 * scripts/bench/pipeline-idle.ts: 30-40 ms of CPU per second in each pipeline process with no
 * document at all.
 *
 * The check only ever sends requests that wait in `pending` (held back by throttling or by the
 * in-flight limit); a request pushed into an empty queue is sent at once or, when held back,
 * schedules its own check, and a fulfilled request checks the queue itself. So with nothing
 * pending there is nothing to schedule: this wraps `scheduleCheckPendingRequests` to return then,
 * and otherwise does what kafkajs does. Installed when this module is loaded (kafka.ts imports it
 * before any connection exists); `requestQueueTimerFixed` says whether kafkajs' internals were as
 * expected (a test asserts it, and that a queue left empty keeps no timer).
 */
interface RequestQueueLike {
  pending: unknown[];
  throttleCheckTimeoutId: unknown;
}

function install(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const RequestQueue = require('kafkajs/src/network/requestQueue') as {
      prototype: { scheduleCheckPendingRequests?: (this: RequestQueueLike) => void };
    };
    const original = RequestQueue.prototype.scheduleCheckPendingRequests;
    if (typeof original !== 'function') return false;
    RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueLike) {
      if (this.pending.length === 0) return;
      original.call(this);
    };
    return true;
  } catch {
    return false;
  }
}

/** whether kafkajs' request queues were fixed (false: kafkajs as shipped) */
export const requestQueueTimerFixed = install();
