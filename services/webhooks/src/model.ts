import type { WebhookEventType } from '@dte/status';
import type { SigningKey } from './signature';

export type SiiEnv = 'cert' | 'prod';
export type DeliveryState = 'pending' | 'delivered' | 'exhausted';

/**
 * A webhook subscription as the delivery side sees it. Its signing secret is not part of it: the
 * secret is stored sealed and opened only for the attempt that signs (`claimAttempt`).
 */
export interface Subscription {
  id: string;
  organization_id: string;
  /** the company of a company-scoped subscription; null: organization-wide */
  company_id?: string | null;
  sii_env: SiiEnv;
  url: string;
  events: WebhookEventType[];
  active: boolean;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** exhausted deliveries since the last delivered one */
  consecutive_exhausted: number;
  created_at: Date;
}

/** One event to one subscription; the payload is fixed at creation so every attempt sends the same body. */
export interface Delivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: WebhookEventType;
  payload: string;
  state: DeliveryState;
  /** attempts made so far */
  attempts: number;
  /** when the next attempt is due (null once terminal) */
  next_attempt_at: Date | null;
  /** an attempt in flight holds the delivery until then */
  lease_until: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** A due attempt, as it travels on the retry topics (schemas/avro/webhook-delivery.avsc). */
export interface DueAttempt {
  event_id: string;
  delivery_id: string;
  subscription_id: string;
  /** 1-based */
  attempt: number;
  /** ISO-8601 */
  due_at: string;
  /** the subscription's organization: the delivery queue's fairness key (absent: unknown) */
  organization_id?: string | null;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
}

/** What the delivery core needs from persistence; PostgreSQL in the service, memory in unit tests. */
export interface DeliveryStore {
  /**
   * Takes attempt `attempt` of a pending delivery whose previous attempts are all recorded and
   * that is due, leasing it until `leaseUntil`; null when someone else has it, it is not due,
   * not pending, or the attempt is a duplicate. `secret` is the subscription's current signing
   * secret, read now, so a rotation stops the old one at once. With `held`, a lease the caller
   * took itself (a claim made ahead) ending then is renewed as well. `ahead`: a claim made before
   * its attempt starts, which the store may hold back briefly to share a statement (until `hurry`).
   */
  claimAttempt(
    deliveryId: string,
    attempt: number,
    now: Date,
    leaseUntil: Date,
    held?: Date,
    opts?: { ahead?: boolean },
  ): Promise<{ delivery: Delivery; subscription: Subscription; secret: SigningKey } | null>;
  /** claims made ahead that the store holds back go now (an attempt waits for one) */
  hurry?(): void;
  /** attempt succeeded: delivered, and the endpoint's exhausted streak is reset */
  markDelivered(deliveryId: string, attempt: number, now: Date, outcome: AttemptOutcome): Promise<void>;
  /** attempt failed with attempts left: pending again, due at nextAt */
  markRetry(
    deliveryId: string,
    attempt: number,
    now: Date,
    nextAt: Date,
    outcome: AttemptOutcome,
  ): Promise<void>;
  /**
   * attempt failed and none are left: exhausted. When `countsTowardsDisable`, the endpoint's streak
   * grows and at `disableAfter` the subscription is deactivated; `disabledNow` is true for the one
   * call that deactivated it.
   */
  markExhausted(
    deliveryId: string,
    attempt: number,
    now: Date,
    outcome: AttemptOutcome,
    opts: { countsTowardsDisable: boolean; disableAfter: number; disabledReason: string },
  ): Promise<{ disabledNow: boolean; subscription: Subscription | null }>;
  /**
   * Pending deliveries that nobody holds and whose next attempt is overdue: a first attempt due
   * before `firstBefore`, a later one due before `retryBefore`.
   */
  findOverdue(opts: {
    firstBefore: Date;
    retryBefore: Date;
    now: Date;
    limit: number;
    /** at most this many rows of one organization (its queue share) */
    perOrganization?: number;
    /** claims the rows returned until then, so no other sweep queues them meanwhile */
    queuedUntil?: Date;
    /** only this organization's rows (a refill of its refused attempts) */
    organizationId?: string;
    /** not these deliveries (those waiting in memory already) */
    exclude?: string[];
  }): Promise<DueAttempt[]>;
  /** gives back the sweep's claim of rows the in-memory queue did not take */
  releaseQueued?(deliveryIds: string[]): Promise<void>;
  /** removes delivered/exhausted records completed before `before`; returns how many */
  purgeTerminal(before: Date): Promise<number>;
}
