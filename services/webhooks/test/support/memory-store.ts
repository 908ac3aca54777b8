import crypto from 'node:crypto';
import type { WebhookEventType } from '@dte/status';
import type {
  AttemptOutcome,
  Delivery,
  DeliveryStore,
  DueAttempt,
  SiiEnv,
  Subscription,
} from '../../src/model';
import type { DocumentWebhookState, IngestStore, IngestTx, NewDelivery } from '../../src/ingest';
import { newWebhookSecret } from '../../src/signature';

/**
 * The DeliveryStore contract in memory, for the core's unit tests (no database needed). The
 * PostgreSQL store implements the same contract and has its own tests against a real server.
 */
export class MemoryStore implements DeliveryStore, IngestStore {
  readonly subscriptions = new Map<string, Subscription>();
  /** signing secrets by subscription id (the PostgreSQL store keeps them sealed) */
  readonly secrets = new Map<string, string>();
  readonly deliveries = new Map<string, Delivery>();
  readonly documents = new Map<string, DocumentWebhookState>();
  /** dte-status event ids already ingested (processed_events in PostgreSQL) */
  readonly processedEvents = new Set<string>();

  addSubscription(
    p: Partial<Subscription> & { url: string; organization_id?: string; sii_env?: SiiEnv; secret?: string },
  ): Subscription & { secret: string } {
    const s: Subscription = {
      id: crypto.randomUUID(),
      organization_id: p.organization_id ?? 'org-1',
      sii_env: p.sii_env ?? 'cert',
      url: p.url,
      events:
        p.events ??
        (['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'] as WebhookEventType[]),
      active: p.active ?? true,
      disabled_at: null,
      disabled_reason: null,
      consecutive_exhausted: 0,
      created_at: new Date(),
    };
    const secret = p.secret ?? newWebhookSecret();
    this.subscriptions.set(s.id, s);
    this.secrets.set(s.id, secret);
    return { ...s, secret };
  }

  addDelivery(
    sub: Subscription,
    payload: string,
    now: Date,
    type: WebhookEventType = 'dte.status_changed',
  ): Delivery {
    const d: Delivery = {
      id: crypto.randomUUID(),
      subscription_id: sub.id,
      event_id: `evt_${crypto.randomUUID()}`,
      event_type: type,
      payload,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_until: null,
      last_status: null,
      last_error: null,
      created_at: now,
      completed_at: null,
    };
    this.deliveries.set(d.id, d);
    return d;
  }

  async claimAttempt(deliveryId: string, attempt: number, now: Date, leaseUntil: Date) {
    const d = this.deliveries.get(deliveryId);
    if (!d || d.state !== 'pending' || d.attempts !== attempt - 1) return null;
    if (d.next_attempt_at && d.next_attempt_at > now) return null;
    if (d.lease_until && d.lease_until > now) return null;
    const s = this.subscriptions.get(d.subscription_id);
    if (!s) return null;
    d.lease_until = leaseUntil;
    return { delivery: { ...d }, subscription: { ...s }, secret: this.secrets.get(s.id)! };
  }

  private finish(id: string, attempt: number, o: AttemptOutcome): Delivery | null {
    const d = this.deliveries.get(id);
    if (!d || d.attempts !== attempt - 1) return null;
    d.attempts = attempt;
    d.lease_until = null;
    d.last_status = o.status;
    d.last_error = o.error;
    return d;
  }

  async markDelivered(id: string, attempt: number, now: Date, o: AttemptOutcome) {
    const d = this.finish(id, attempt, o);
    if (!d) return;
    d.state = 'delivered';
    d.completed_at = now;
    d.next_attempt_at = null;
    const s = this.subscriptions.get(d.subscription_id);
    if (s) s.consecutive_exhausted = 0;
  }

  async markRetry(id: string, attempt: number, _now: Date, nextAt: Date, o: AttemptOutcome) {
    const d = this.finish(id, attempt, o);
    if (d) d.next_attempt_at = nextAt;
  }

  async markExhausted(
    id: string,
    attempt: number,
    now: Date,
    o: AttemptOutcome,
    opts: { countsTowardsDisable: boolean; disableAfter: number; disabledReason: string },
  ) {
    const d = this.finish(id, attempt, o);
    if (!d) return { disabledNow: false, subscription: null };
    d.state = 'exhausted';
    d.completed_at = now;
    d.next_attempt_at = null;
    const s = this.subscriptions.get(d.subscription_id);
    if (!s) return { disabledNow: false, subscription: null };
    let disabledNow = false;
    if (opts.countsTowardsDisable) {
      s.consecutive_exhausted++;
      if (s.active && s.consecutive_exhausted >= opts.disableAfter) {
        s.active = false;
        s.disabled_at = now;
        s.disabled_reason = opts.disabledReason;
        disabledNow = true;
      }
    }
    return { disabledNow, subscription: { ...s } };
  }

  async findOverdue(o: {
    firstBefore: Date;
    retryBefore: Date;
    now: Date;
    limit: number;
    organizationId?: string;
    exclude?: string[];
  }): Promise<DueAttempt[]> {
    const { now, limit } = o;
    const excluded = new Set(o.exclude ?? []);
    return [...this.deliveries.values()]
      .filter(
        (d) =>
          d.state === 'pending' &&
          !excluded.has(d.id) &&
          (o.organizationId === undefined ||
            this.subscriptions.get(d.subscription_id)?.organization_id === o.organizationId) &&
          d.next_attempt_at !== null &&
          d.next_attempt_at <= (d.attempts === 0 ? o.firstBefore : o.retryBefore) &&
          (!d.lease_until || d.lease_until <= now),
      )
      .slice(0, limit)
      .map((d) => ({
        event_id: crypto.randomUUID(),
        delivery_id: d.id,
        subscription_id: d.subscription_id,
        attempt: d.attempts + 1,
        due_at: d.next_attempt_at!.toISOString(),
      }));
  }

  async purgeTerminal(before: Date): Promise<number> {
    let n = 0;
    for (const [id, d] of this.deliveries)
      if (d.state !== 'pending' && d.completed_at && d.completed_at < before) {
        this.deliveries.delete(id);
        n++;
      }
    return n;
  }

  async inTransaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T> {
    const tx: IngestTx = {
      claimEvents: async (events, documents) => {
        // only organizations with a subscription (active or not) are recorded
        const hooked = (org: string) =>
          [...this.subscriptions.values()].some((s) => s.organization_id === org);
        const ids = events.filter((e) => hooked(e.organization_id)).map((e) => e.id);
        const claimed = new Set(ids.filter((id) => !this.processedEvents.has(id)));
        for (const id of claimed) this.processedEvents.add(id);
        const states = new Map<string, DocumentWebhookState>();
        for (const { id, organization_id } of documents)
          if (hooked(organization_id) && this.documents.has(id))
            states.set(id, { ...this.documents.get(id)! });
        return { claimed, states };
      },
      saveDocumentStates: async (states) => {
        for (const s of states) this.documents.set(s.dte_id, { ...s });
      },
      activeSubscriptions: async (keys) =>
        keys.map((k) =>
          [...this.subscriptions.values()].filter(
            (s) => s.organization_id === k.organization_id && s.sii_env === k.sii_env && s.active,
          ),
        ),
      insertDeliveries: async (rows: NewDelivery[]) => {
        const inserted: NewDelivery[] = [];
        for (const r of rows) {
          const dup = [...this.deliveries.values()].some(
            (d) => d.subscription_id === r.subscription_id && d.event_id === r.event_id,
          );
          if (dup) continue;
          this.deliveries.set(r.id, {
            ...r,
            state: 'pending',
            attempts: 0,
            lease_until: null,
            last_status: null,
            last_error: null,
            completed_at: null,
          });
          inserted.push(r);
        }
        return inserted;
      },
    };
    return fn(tx);
  }
}
