import type { Clock } from './clock';
import { postWebhook, type PostOptions, type PostResult } from './http-delivery';
import type { DeliveryStore, DueAttempt } from './model';
import type { DisableNotifier } from './notifier';
import { delayBeforeAttempt, maxAttempts, tierOfAttempt, type RetryPlan } from './retry-plan';
import type { AttemptScheduler } from './scheduler';
import { SIGNATURE_HEADER, signatureHeader } from './signature';
import type { Logger } from '@dte/service-runtime';
import crypto from 'node:crypto';

export type Poster = (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;

export interface DispatcherDeps {
  store: DeliveryStore;
  clock: Clock;
  plan: RetryPlan;
  scheduler: AttemptScheduler;
  notifier: DisableNotifier;
  post: PostOptions | Poster;
  /** consecutive exhausted deliveries that deactivate an endpoint (spec: 3) */
  disableAfter: number;
  /** how long a claimed attempt holds its delivery (timeout + margin) */
  leaseMs: number;
  /**
   * the oldest a claim made ahead (`prefetch`) may be when its attempt starts, so that the lease
   * still covers the whole attempt (at most leaseMs - timeout); older, the attempt is not made and
   * the overdue sweep runs it once the lease lapsed. Default leaseMs / 4.
   */
  claimAheadMaxAgeMs?: number;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
}

export type AttemptResult = 'delivered' | 'retry' | 'exhausted' | 'skipped';

type Claimed = NonNullable<Awaited<ReturnType<DeliveryStore['claimAttempt']>>>;

export const DISABLED_REASON = 'consecutive_exhausted_deliveries';

/**
 * Runs one attempt of one delivery: claims it (so a duplicate message or the overdue sweep
 * never runs the same attempt twice), checks the URL again, signs the stored body with the
 * subscription's current secret, POSTs it, records the outcome and schedules what follows.
 */
export class Dispatcher {
  private readonly post: Poster;
  /** claims made ahead, by delivery id and attempt */
  private readonly ahead = new Map<
    string,
    { at: number; lease: Date; claim: Promise<Claimed | null>; settled: boolean }
  >();

  constructor(private readonly deps: DispatcherDeps) {
    const p = deps.post;
    this.post = typeof p === 'function' ? p : (url, body, headers) => postWebhook(url, body, headers, p);
  }

  /**
   * Claims an attempt that is about to start (its endpoint's slot frees soon), so that its claim
   * shares the statement of the claims and delivered marks made now; `attempt` then uses it. A
   * claim made ahead holds the delivery like any claim (its lease), and reads the subscription and
   * its secret at most one attempt's time before the POST, as a claim always did.
   */
  prefetch(due: Pick<DueAttempt, 'delivery_id' | 'attempt'>): void {
    const k = `${due.delivery_id}:${due.attempt}`;
    if (this.ahead.has(k)) return;
    const at = this.deps.clock.now();
    const lease = new Date(at + this.deps.leaseMs);
    const claim = this.deps.store.claimAttempt(due.delivery_id, due.attempt, new Date(at), lease, undefined, {
      ahead: true,
    });
    const entry = { at, lease, claim, settled: false };
    // the attempt that takes it sees an error
    claim.then(
      () => (entry.settled = true),
      () => (entry.settled = true),
    );
    this.ahead.set(k, entry);
  }

  /** Runs one attempt and resolves once its outcome is recorded. */
  async runAttempt(due: Pick<DueAttempt, 'delivery_id' | 'attempt'>): Promise<AttemptResult> {
    const { result, recorded } = await this.attempt(due);
    await recorded;
    return result;
  }

  /**
   * Runs one attempt and resolves as soon as the endpoint answered, with `recorded`, which settles
   * once the outcome is written. Only a delivered mark can still be in flight then (a retry or an
   * exhausted outcome is written before this resolves): the delivery keeps its lease until the
   * mark lands, so nobody claims it again meanwhile, and the delivery pool can start the endpoint's
   * next attempt at once, whose claim then goes in the same statement as this mark.
   */
  async attempt(
    due: Pick<DueAttempt, 'delivery_id' | 'attempt'>,
  ): Promise<{ result: AttemptResult; recorded: Promise<void> }> {
    const done = Promise.resolve();
    const { store, clock, plan } = this.deps;
    const now = new Date(clock.now());
    const k = `${due.delivery_id}:${due.attempt}`;
    const ahead = this.ahead.get(k);
    this.ahead.delete(k);
    const leaseUntil = () => new Date(clock.now() + this.deps.leaseMs);
    // a claim made ahead that the store still holds back goes now: this attempt waits for it
    if (ahead && !ahead.settled) store.hurry?.();
    let claimed = ahead
      ? await ahead.claim
      : await store.claimAttempt(due.delivery_id, due.attempt, now, leaseUntil());
    if (
      claimed &&
      ahead &&
      clock.now() - ahead.at > (this.deps.claimAheadMaxAgeMs ?? this.deps.leaseMs / 4)
    ) {
      // claimed too long ago (a secret rotated since must not sign; the lease must cover the
      // attempt): claimed again now (renewing that lease if it is still ours, and reading the
      // subscription and secret again)
      claimed = await store.claimAttempt(
        due.delivery_id,
        due.attempt,
        new Date(clock.now()),
        leaseUntil(),
        ahead.lease,
      );
    }
    if (!claimed) return { result: 'skipped', recorded: done };
    const { delivery, subscription, secret } = claimed;
    const last = due.attempt >= maxAttempts(plan);

    if (!subscription.active) {
      await store.markExhausted(
        delivery.id,
        due.attempt,
        now,
        { status: null, error: 'endpoint_disabled' },
        {
          countsTowardsDisable: false,
          disableAfter: this.deps.disableAfter,
          disabledReason: DISABLED_REASON,
        },
      );
      return { result: 'exhausted', recorded: done };
    }

    const headers = {
      [SIGNATURE_HEADER]: signatureHeader(secret, delivery.payload, clock.now()),
    };
    const result = await this.post(subscription.url, delivery.payload, headers);
    const at = new Date(clock.now());
    const outcome = { status: result.status ?? null, error: result.ok ? null : (result.error ?? 'failed') };
    // one line per attempt: at info when it failed, at debug when it was delivered (the
    // 'dte-status consumed' line already names every delivery created; a line per success was a
    // tenth of the service's CPU under load)
    const log = this.deps.logger;
    if (log) {
      const fields = {
        delivery_id: delivery.id,
        subscription_id: subscription.id,
        attempt: due.attempt,
        ok: result.ok,
        status: result.status,
        error: result.error,
        ms: result.durationMs,
      };
      if (result.ok) log.debug(fields, 'webhook attempt');
      else log.info(fields, 'webhook attempt');
    }

    if (result.ok) {
      return { result: 'delivered', recorded: store.markDelivered(delivery.id, due.attempt, at, outcome) };
    }
    if (!last) {
      const next = due.attempt + 1;
      const nextAt = new Date(at.getTime() + delayBeforeAttempt(plan, next));
      await store.markRetry(delivery.id, due.attempt, at, nextAt, outcome);
      await this.deps.scheduler.schedule(
        {
          event_id: crypto.randomUUID(),
          delivery_id: delivery.id,
          subscription_id: subscription.id,
          attempt: next,
          due_at: nextAt.toISOString(),
          organization_id: subscription.organization_id,
        },
        tierOfAttempt(next),
      );
      return { result: 'retry', recorded: done };
    }
    const { disabledNow, subscription: after } = await store.markExhausted(
      delivery.id,
      due.attempt,
      at,
      outcome,
      {
        countsTowardsDisable: true,
        disableAfter: this.deps.disableAfter,
        disabledReason: DISABLED_REASON,
      },
    );
    if (disabledNow && after) {
      this.deps.logger?.warn({ subscription_id: after.id }, 'webhook endpoint deactivated');
      try {
        await this.deps.notifier.endpointDisabled(after);
      } catch (err) {
        this.deps.logger?.error({ err, subscription_id: after.id }, 'could not e-mail the owner');
      }
    }
    return { result: 'exhausted', recorded: done };
  }
}
