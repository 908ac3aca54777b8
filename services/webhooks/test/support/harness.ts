import { systemClock, type Clock } from '../../src/clock';
import { Dispatcher, type Poster } from '../../src/dispatcher';
import type { PostOptions } from '../../src/http-delivery';
import type { DueAttempt, Subscription } from '../../src/model';
import { MailDisableNotifier, type DisableNotifier } from '../../src/notifier';
import { DeliveryRunner } from '../../src/runner';
import { TimerScheduler } from '../../src/scheduler';
import { MemoryStore } from './memory-store';

export interface HarnessOptions {
  delaysMs?: number[];
  post: PostOptions | Poster;
  smtpUrl?: string;
  ownerEmail?: string;
  clock?: Clock;
  concurrency?: number;
  perEndpoint?: number;
  disableAfter?: number;
}

/** The delivery core wired as the service wires it, with the in-memory store and local timers. */
export function harness(o: HarnessOptions) {
  const store = new MemoryStore();
  const clock = o.clock ?? systemClock;
  const holder: { runner?: DeliveryRunner } = {};
  const scheduler = new TimerScheduler(clock, (a) => holder.runner!.enqueue(a));
  const mailer = o.smtpUrl
    ? new MailDisableNotifier(
        { smtpUrl: o.smtpUrl, from: 'webhooks@dte.test' },
        async () => o.ownerEmail ?? null,
      )
    : null;
  const notifier: DisableNotifier = mailer ?? { endpointDisabled: async () => undefined };
  const dispatcher = new Dispatcher({
    store,
    clock,
    plan: { delaysMs: o.delaysMs ?? [] },
    scheduler,
    notifier,
    post: o.post,
    disableAfter: o.disableAfter ?? 3,
    leaseMs: 15_000,
  });
  const runner = new DeliveryRunner(dispatcher, store, clock, {
    concurrency: o.concurrency ?? 16,
    perEndpoint: o.perEndpoint ?? 4,
    onError: (err) => console.error(err),
  });
  holder.runner = runner;
  const first = (deliveryId: string, sub: Subscription): DueAttempt => ({
    event_id: 'x',
    delivery_id: deliveryId,
    subscription_id: sub.id,
    attempt: 1,
    due_at: new Date(clock.now()).toISOString(),
  });
  return {
    store,
    clock,
    dispatcher,
    runner,
    scheduler,
    /** adds a pending delivery of `payload` for `sub` and runs its first attempt */
    send(sub: Subscription, payload = '{"id":"evt_test"}') {
      const d = store.addDelivery(sub, payload, new Date(clock.now()));
      runner.enqueue(first(d.id, sub));
      return d;
    },
    /** resolves when no attempt runs, waits in the pool or waits on a timer */
    async settled() {
      for (let quiet = 0; quiet < 3;) {
        await runner.idle();
        await new Promise((r) => setTimeout(r, 10));
        quiet = runner.queue.size === 0 && scheduler.pending === 0 ? quiet + 1 : 0;
      }
    },
    close() {
      scheduler.close();
      mailer?.close();
    },
  };
}
