import crypto from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { open, webhookSecretAad, type KeyWrapper } from '@dte/secrets';
import type { WebhookEventType } from '@dte/status';
import {
  STATUS_CONSUMER,
  type AudienceKey,
  type OrganizationItem,
  type DocumentWebhookState,
  type IngestStore,
  type IngestTx,
  type NewDelivery,
} from './ingest';
import { Coalescer } from './coalesce';
import type { AttemptOutcome, Delivery, DeliveryStore, DueAttempt, SiiEnv, Subscription } from './model';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(v: string): boolean {
  return UUID.test(v);
}

type Row = Record<string, unknown>;

interface ClaimRequest {
  deliveryId: string;
  attempt: number;
  now: Date;
  leaseUntil: Date;
  /** a lease of the caller's own, ending then, that this claim renews */
  held: Date | null;
}

/** one call of a round: a claim or a delivered mark */
interface RoundItem {
  claim?: ClaimRequest;
  mark?: DeliveredMark;
}

/** opened signing keys kept per store */
const SECRET_CACHE = 1000;

/**
 * The longest a round's write that nobody waits for (a delivered mark) or a claim made ahead waits
 * for company before its statement goes; an attempt that needs its claim made ahead sends it at
 * once (`hurry`). The delivery keeps its lease meanwhile, so this only delays the record.
 */
export const ROUND_LINGER_MS = 100;

interface DeliveredMark {
  deliveryId: string;
  attempt: number;
  now: Date;
  outcome: AttemptOutcome;
}

export function subscriptionFromRow(r: Row): Subscription {
  return {
    id: r.id as string,
    organization_id: r.organization_id as string,
    company_id: (r.company_id as string | null | undefined) ?? null,
    sii_env: r.sii_env as SiiEnv,
    url: r.url as string,
    events: r.events as WebhookEventType[],
    active: r.active as boolean,
    disabled_at: (r.disabled_at as Date | null) ?? null,
    disabled_reason: (r.disabled_reason as string | null) ?? null,
    consecutive_exhausted: Number(r.consecutive_exhausted),
    created_at: r.created_at as Date,
  };
}

/** The columns of a subscription the delivery side reads (never its secrets). */
const SUBSCRIPTION_COLUMNS = [
  'id',
  'organization_id',
  'company_id',
  'sii_env',
  'url',
  'events',
  'active',
  'disabled_at',
  'disabled_reason',
  'consecutive_exhausted',
  'created_at',
];

/** ... and what an attempt reads of it: those and the signing secret (sealed, or clear from before) */
const CLAIM_SUBSCRIPTION_COLUMNS = [...SUBSCRIPTION_COLUMNS, 'secret', 'secret_sealed'];

/** A subscription's delivery-side columns as one jsonb value (the claim of a batch's event ids returns them). */
const SUBSCRIPTION_JSON = `jsonb_build_object(${SUBSCRIPTION_COLUMNS.map((c) => `'${c}', s.${c}`).join(', ')})`;

function subscriptionFromJson(j: Row): Subscription {
  return subscriptionFromRow({
    ...j,
    created_at: new Date(j.created_at as string),
    disabled_at: j.disabled_at == null ? null : new Date(j.disabled_at as string),
  });
}

/** the parameters of the audience keys (organization, environment, document) of a subscriptions read */
function audienceParams(keys: AudienceKey[]): unknown[] {
  return [
    keys.map((k) => k.organization_id),
    keys.map((k) => k.sii_env),
    keys.map((k) => (isUuid(k.dte_id) ? k.dte_id : null)),
  ];
}

/** Delivery rows per INSERT statement when one event fans out to many subscriptions. */
export const DELIVERY_INSERT_CHUNK = 500;

/**
 * The signing secret of a subscription row: opened from `secret_sealed`, or the clear `secret` of
 * a subscription made before secrets were sealed. A sealed secret that does not open (another
 * master key) throws: the attempt is not made and its lease lapses, so it is tried again.
 */
export async function signingSecret(keys: KeyWrapper, r: Row): Promise<string> {
  if (r.secret_sealed != null) {
    return (await open(keys, r.secret_sealed, webhookSecretAad(r.id as string))).toString('utf8');
  }
  if (typeof r.secret === 'string') return r.secret;
  throw new Error(`webhook subscription ${String(r.id)} has no signing secret`);
}

function deliveryFromRow(r: Row): Delivery {
  return {
    id: r.id as string,
    subscription_id: r.subscription_id as string,
    event_id: r.event_id as string,
    event_type: r.event_type as WebhookEventType,
    payload: r.payload as string,
    state: r.state as Delivery['state'],
    attempts: Number(r.attempts),
    next_attempt_at: (r.next_attempt_at as Date | null) ?? null,
    lease_until: (r.lease_until as Date | null) ?? null,
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: (r.last_error as string | null) ?? null,
    created_at: r.created_at as Date,
    completed_at: (r.completed_at as Date | null) ?? null,
  };
}

/**
 * The delivery core's persistence on PostgreSQL (tables of migration Webhooks1763790000000).
 * Every state change is one conditional statement or one short transaction, so concurrent
 * workers (several processes, the sweep and the retry topics) never run an attempt twice.
 * Times come from the caller's clock, never from the database's now().
 */
export class PgWebhookStore implements DeliveryStore, IngestStore {
  constructor(
    private readonly ds: DataSource,
    /** opens the sealed signing secrets */
    private readonly keys: KeyWrapper,
  ) {}

  /**
   * Claims of attempts and delivered marks made at the same time share ONE statement (Coalescer,
   * a group commit without timer): the conditional lease of each attempt and the read of its
   * subscription (with the sealed secret, opened here), joined in the UPDATE's RETURNING, and the
   * delivered marks in a data-modifying WITH of the same UPDATE. A finished attempt's mark and
   * the claim of the attempt that takes its endpoint slot are made in the same turn, so under load
   * a delivery costs well under one statement. Marks and claims made ahead are not urgent: they
   * wait up to ROUND_LINGER_MS for company, unless a claim someone waits for goes first (`hurry`).
   */
  private readonly round = new Coalescer<RoundItem, Row | null>(
    (items) => this.runRound(items),
    1,
    200,
    ROUND_LINGER_MS,
  );
  /** opened signing secrets by subscription and sealed value (a rotation changes the value) */
  private readonly secrets = new Map<string, crypto.KeyObject>();

  async claimAttempt(
    deliveryId: string,
    attempt: number,
    now: Date,
    leaseUntil: Date,
    held?: Date,
    opts: { ahead?: boolean } = {},
  ) {
    if (!isUuid(deliveryId)) return null;
    const row = await this.round.run(
      { claim: { deliveryId, attempt, now, leaseUntil, held: held ?? null } },
      { urgent: !opts.ahead },
    );
    if (!row) return null;
    const sub: Row = {};
    for (const c of CLAIM_SUBSCRIPTION_COLUMNS) sub[c] = row[`s_${c}`];
    const secret = await this.openSecret(sub);
    return { delivery: deliveryFromRow(row), subscription: subscriptionFromRow(sub), secret };
  }

  /**
   * The subscription's signing key, from the sealed secret this claim just read: opened once per
   * sealed value and kept as an HMAC key object (at most SECRET_CACHE entries). A rotation writes
   * a new sealed value, which is opened at its first claim, so the old secret stops at once.
   */
  private async openSecret(sub: Row): Promise<crypto.KeyObject> {
    const sealed = sub.secret_sealed as { kid?: string; wk?: string; ct?: string } | null | undefined;
    const cacheKey =
      sealed != null
        ? `${String(sub.id)}|${sealed.kid}|${sealed.wk}|${sealed.ct}`
        : `${String(sub.id)}|clear|${String(sub.secret)}`;
    const known = this.secrets.get(cacheKey);
    if (known) return known;
    const key = crypto.createSecretKey(Buffer.from(await signingSecret(this.keys, sub), 'utf8'));
    this.secrets.set(cacheKey, key);
    if (this.secrets.size > SECRET_CACHE) this.secrets.delete(this.secrets.keys().next().value as string);
    return key;
  }

  /** one round: the delivered marks and the claims in one statement; results in the items' order */
  private async runRound(items: RoundItem[]): Promise<(Row | null)[]> {
    const marks: DeliveredMark[] = [];
    const marked = new Set<string>();
    for (const it of items)
      if (it.mark) {
        marks.push(it.mark);
        marked.add(it.mark.deliveryId.toLowerCase());
      }
    // one change per delivery in a statement (an UPDATE changes a row once): a claim of a delivery
    // marked or claimed in this round goes in a statement of its own after it
    const first: ClaimRequest[] = [];
    const rest: RoundItem[] = [];
    const later = new Set<RoundItem>();
    const ids = new Set(marked);
    for (const it of items) {
      if (!it.claim) continue;
      const id = it.claim.deliveryId.toLowerCase();
      if (ids.has(id)) {
        rest.push(it);
        later.add(it);
      } else {
        ids.add(id);
        first.push(it.claim);
      }
    }
    const claimedRows = await retryOnDeadlock(() => this.claimAndMark(first, marks));
    const byId = new Map(claimedRows.map((r) => [String(r.id).toLowerCase(), r]));
    const out = new Map<RoundItem, Row | null>();
    for (const it of items)
      if (it.claim && !later.has(it)) out.set(it, byId.get(it.claim.deliveryId.toLowerCase()) ?? null);
    if (rest.length > 0) {
      const again = await this.runRound(rest);
      rest.forEach((it, i) => out.set(it, again[i]!));
    }
    return items.map((it) => out.get(it) ?? null);
  }

  /**
   * The statement of a round: claims `claims` (the rows it leased, with their subscriptions) after
   * marking `marks` delivered (each endpoint's exhausted streak reset, its row rewritten only if
   * there is one). Marks and claims are of different deliveries.
   */
  private async claimAndMark(claims: ClaimRequest[], marks: DeliveredMark[]): Promise<Row[]> {
    const markParams = [
      marks.map((it) => it.deliveryId),
      marks.map((it) => it.attempt),
      marks.map((it) => it.now),
      marks.map((it) => it.outcome.status),
      marks.map((it) => it.outcome.error),
    ];
    const markSql = (first: number, last: string) =>
      `WITH v AS (
         SELECT * FROM unnest($${first}::uuid[], $${first + 1}::int[], $${first + 2}::timestamptz[],
                              $${first + 3}::int[], $${first + 4}::text[]) AS v(id, attempt, at, status, error)),
       done AS (
         UPDATE webhook_deliveries w
            SET state = 'delivered', attempts = v.attempt, lease_until = NULL, next_attempt_at = NULL,
                last_status = v.status, last_error = v.error, completed_at = v.at
           FROM v
          WHERE w.id = v.id AND w.state = 'pending' AND w.attempts = v.attempt - 1
          RETURNING w.subscription_id)${last}`;
    const resetSql = `UPDATE webhook_subscriptions s SET consecutive_exhausted = 0
         FROM (SELECT DISTINCT subscription_id FROM done) x
        WHERE s.id = x.subscription_id AND s.consecutive_exhausted <> 0`;
    if (claims.length === 0) {
      if (marks.length > 0) await this.ds.query(markSql(1, `\n       ${resetSql}`), markParams);
      return [];
    }
    const claimSql = `UPDATE webhook_deliveries d SET lease_until = c.lease
         FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[])
                AS c(id, attempt, now, lease, held),
              webhook_subscriptions s
        WHERE d.id = c.id AND s.id = d.subscription_id AND d.state = 'pending' AND d.attempts = c.attempt - 1
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= c.now)
          AND (d.lease_until IS NULL OR d.lease_until <= c.now OR d.lease_until = c.held)
        RETURNING d.*, ${CLAIM_SUBSCRIPTION_COLUMNS.map((c) => `s.${c} AS s_${c}`).join(', ')}`;
    const claimParams = [
      claims.map((it) => it.deliveryId),
      claims.map((it) => it.attempt),
      claims.map((it) => it.now),
      claims.map((it) => it.leaseUntil),
      claims.map((it) => it.held),
    ];
    // the claim reads the subscription as the statement began (a streak reset by a mark of the
    // same round is not in it; the claim uses the secret, url, active flag and organization only)
    const sql =
      marks.length === 0
        ? claimSql
        : `${markSql(claimParams.length + 1, `,\n       r AS (${resetSql} RETURNING 1)`)}
       ${claimSql}`;
    return rowsOf(
      await this.ds.query(sql, marks.length === 0 ? claimParams : [...claimParams, ...markParams]),
    );
  }

  /** the claims made ahead (and marks) waiting for their round go now: an attempt needs one */
  hurry(): void {
    this.round.hurry();
  }

  async markDelivered(deliveryId: string, attempt: number, now: Date, o: AttemptOutcome): Promise<void> {
    // written in the background (the delivery keeps its lease until then): no need to hurry
    await this.round.run({ mark: { deliveryId, attempt, now, outcome: o } }, { urgent: false });
  }

  async markRetry(deliveryId: string, attempt: number, _now: Date, nextAt: Date, o: AttemptOutcome) {
    await this.ds.query(
      `UPDATE webhook_deliveries
          SET attempts = $2, lease_until = NULL, next_attempt_at = $3, last_status = $4, last_error = $5
        WHERE id = $1 AND state = 'pending' AND attempts = $2 - 1`,
      [deliveryId, attempt, nextAt, o.status, o.error],
    );
  }

  async markExhausted(
    deliveryId: string,
    attempt: number,
    now: Date,
    o: AttemptOutcome,
    opts: { countsTowardsDisable: boolean; disableAfter: number; disabledReason: string },
  ): Promise<{ disabledNow: boolean; subscription: Subscription | null }> {
    return this.ds.transaction(async (m) => {
      const done = firstRow(
        await m.query(
          `UPDATE webhook_deliveries
              SET state = 'exhausted', attempts = $2, lease_until = NULL, next_attempt_at = NULL,
                  last_status = $4, last_error = $5, completed_at = $3
            WHERE id = $1 AND state = 'pending' AND attempts = $2 - 1
            RETURNING subscription_id`,
          [deliveryId, attempt, now, o.status, o.error],
        ),
      );
      if (!done) return { disabledNow: false, subscription: null };
      const current = firstRow(
        await m.query(`SELECT * FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`, [done.subscription_id]),
      );
      if (!current) return { disabledNow: false, subscription: null };
      if (!opts.countsTowardsDisable)
        return { disabledNow: false, subscription: subscriptionFromRow(current) };
      const streak = Number(current.consecutive_exhausted) + 1;
      const disabledNow = current.active === true && streak >= opts.disableAfter;
      const updated = firstRow(
        await m.query(
          `UPDATE webhook_subscriptions
              SET consecutive_exhausted = $2,
                  active = CASE WHEN $3 THEN false ELSE active END,
                  disabled_at = CASE WHEN $3 THEN $4::timestamptz ELSE disabled_at END,
                  disabled_reason = CASE WHEN $3 THEN $5 ELSE disabled_reason END
            WHERE id = $1 RETURNING *`,
          [current.id, streak, disabledNow, now, opts.disabledReason],
        ),
      );
      return { disabledNow, subscription: updated ? subscriptionFromRow(updated) : null };
    });
  }

  /**
   * Overdue pending deliveries nobody holds, oldest first, at most `perOrganization` of one
   * organization (so one organization's backlog never fills a sweep), CLAIMED until `queuedUntil`
   * in the same statement: a row a sweep already queued is skipped by every other sweep until the
   * claim lapses (a crash), and two processes sweeping at once never both take a row.
   */
  async findOverdue(o: {
    firstBefore: Date;
    retryBefore: Date;
    now: Date;
    limit: number;
    perOrganization?: number;
    queuedUntil?: Date;
    organizationId?: string;
    exclude?: string[];
  }): Promise<DueAttempt[]> {
    const res: unknown = await this.ds.query(
      `WITH candidates AS (
         SELECT d.id, d.next_attempt_at,
                row_number() OVER (PARTITION BY s.organization_id ORDER BY d.next_attempt_at) AS rn
           FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.state = 'pending'
            AND d.next_attempt_at <= CASE WHEN d.attempts = 0 THEN $1::timestamptz ELSE $2::timestamptz END
            AND (d.lease_until IS NULL OR d.lease_until <= $3)
            AND (d.queued_until IS NULL OR d.queued_until <= $3)
            AND ($7::uuid IS NULL OR s.organization_id = $7)
            AND d.id <> ALL($8::uuid[])),
       picked AS (
         SELECT id FROM candidates WHERE rn <= $5 ORDER BY next_attempt_at LIMIT $4),
       free AS (
         SELECT d.id FROM webhook_deliveries d JOIN picked p ON p.id = d.id
            FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d SET queued_until = $6
         FROM free p, webhook_subscriptions s
        WHERE d.id = p.id AND s.id = d.subscription_id
          AND d.state = 'pending' AND (d.queued_until IS NULL OR d.queued_until <= $3)
        RETURNING d.id, d.subscription_id, d.attempts, d.next_attempt_at, s.organization_id`,
      [
        o.firstBefore,
        o.retryBefore,
        o.now,
        o.limit,
        o.perOrganization ?? o.limit,
        o.queuedUntil ?? o.now,
        o.organizationId ?? null,
        o.exclude ?? [],
      ],
    );
    return rowsOf(res)
      .map((r) => ({
        event_id: `sweep:${r.id as string}:${Number(r.attempts) + 1}`,
        delivery_id: r.id as string,
        subscription_id: r.subscription_id as string,
        attempt: Number(r.attempts) + 1,
        due_at: (r.next_attempt_at as Date).toISOString(),
        organization_id: r.organization_id as string,
      }))
      .sort((a, b) => a.due_at.localeCompare(b.due_at));
  }

  async releaseQueued(deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    // a row locked now is being claimed or marked (its queued_until only holds other sweeps off)
    await this.ds.query(
      `UPDATE webhook_deliveries SET queued_until = NULL
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED)`,
      [deliveryIds],
    );
  }

  async purgeTerminal(before: Date): Promise<number> {
    const res = await this.ds.query(
      `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND completed_at < $1`,
      [before],
    );
    return affected(res);
  }

  inTransaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T> {
    return this.ds.transaction(async (m) => {
      const tx = ingestTx(m);
      const out = await fn(tx);
      await tx.flush();
      return out;
    });
  }
}

/**
 * The ingestion statements of one transaction: the claim of the event ids and the locking read of
 * the documents' states in one statement, and the update of the states in the statement of the
 * first insert of deliveries (or on its own when the batch creates none, before the commit).
 */
function ingestTx(m: EntityManager): IngestTx & { flush(): Promise<void> } {
  let unsaved: DocumentWebhookState[] = [];
  const statesParams = (states: DocumentWebhookState[]) => [
    states.map((s) => s.dte_id),
    states.map((s) => s.sii_status),
    states.map((s) => s.observed_at),
    states.map((s) => s.emitted),
  ];
  const updateStates = (first: number) =>
    `UPDATE webhook_document_states w SET sii_status = v.s, observed_at = v.o, emitted = v.e
       FROM unnest($${first}::uuid[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::boolean[])
            AS v(id, s, o, e)
      WHERE w.dte_id = v.id`;
  return {
    async claimEvents(events: OrganizationItem[], documents: OrganizationItem[], audiences?: AudienceKey[]) {
      const states = new Map<string, DocumentWebhookState>();
      if (events.length === 0) return { claimed: new Set<string>(), states };
      // the subscriptions that hear the audiences come with the claim (a third part of its result)
      const asked = (audiences ?? []).map((k, i) => ({ k, i })).filter(({ k }) => isUuid(k.organization_id));
      // ids in code-unit order (as Array.prototype.sort without a comparator)
      const inIdOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
      const docs = [...new Map(documents.map((d) => [d.id.toLowerCase(), d.organization_id] as const))].sort(
        ([a], [b]) => inIdOrder(a, b),
      );
      const sortedEvents = [...events].sort((a, b) => inIdOrder(a.id, b.id));
      // the organizations that have a subscription (an id that is not a uuid has none)
      const orgs = [...new Set(events.map((e) => e.organization_id).filter(isUuid))];
      // event ids sorted, so two members claiming overlapping batches (a rebalance) take the keys in
      // one order; each document's row made if missing, and locked, in the id order (an upsert
      // reads the latest committed row, also one another transaction made meanwhile); only for
      // the organizations that have a subscription
      const rows: Row[] = await m.query(
        `WITH h AS (
           SELECT DISTINCT organization_id::text AS org FROM webhook_subscriptions
            WHERE organization_id = ANY($4::uuid[])),
         e AS (
           INSERT INTO processed_events (consumer, event_id)
           SELECT $1, x.e FROM unnest($2::text[], $5::text[]) WITH ORDINALITY AS x(e, org, n)
             JOIN h ON h.org = x.org ORDER BY x.n
           ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id),
         s AS (
           INSERT INTO webhook_document_states (dte_id)
           SELECT x.d FROM unnest($3::uuid[], $6::text[]) WITH ORDINALITY AS x(d, org, n)
             JOIN h ON h.org = x.org ORDER BY x.n
           ON CONFLICT (dte_id) DO UPDATE SET dte_id = EXCLUDED.dte_id
           RETURNING dte_id, sii_status, observed_at, emitted)
         SELECT event_id, NULL::uuid AS dte_id, NULL::text AS sii_status, NULL::text AS observed_at,
                NULL::boolean AS emitted, NULL::bigint AS n, NULL::bigint AS rn,
                NULL::jsonb AS sub FROM e
         UNION ALL
         SELECT NULL, dte_id, sii_status, observed_at, emitted, NULL, NULL, NULL FROM s${
           asked.length > 0
             ? `
         UNION ALL
         SELECT NULL, NULL, NULL, NULL, NULL, k.n,
                row_number() OVER (PARTITION BY k.n ORDER BY s.created_at, s.id), ${SUBSCRIPTION_JSON}
           FROM unnest($7::uuid[], $8::text[], $9::uuid[]) WITH ORDINALITY AS k(org, env, dte, n)
           LEFT JOIN dtes d ON d.id = k.dte
           JOIN webhook_subscriptions s
             ON s.organization_id = k.org AND s.sii_env = k.env AND s.active
            AND (s.company_id IS NULL OR d.id IS NULL OR s.company_id = d.company_id)`
             : ''
         }`,
        [
          STATUS_CONSUMER,
          sortedEvents.map((e) => e.id),
          docs.map(([id]) => id),
          orgs,
          sortedEvents.map((e) => e.organization_id),
          docs.map(([, org]) => org),
          ...(asked.length > 0 ? audienceParams(asked.map(({ k }) => k)) : []),
        ],
      );
      const claimed = new Set<string>();
      const byId = new Map<string, Row>();
      const heard: Subscription[][] | undefined = audiences?.map(() => []);
      const subRows: Row[] = [];
      for (const r of rows) {
        if (r.event_id != null) claimed.add(r.event_id as string);
        else if (r.dte_id != null) byId.set(r.dte_id as string, r);
        else if (r.n != null) subRows.push(r);
      }
      // in each audience, the subscriptions in the order they were made (as activeSubscriptions)
      subRows.sort((a, b) => Number(a.n) - Number(b.n) || Number(a.rn) - Number(b.rn));
      for (const r of subRows) heard![asked[Number(r.n) - 1]!.i]!.push(subscriptionFromJson(r.sub as Row));
      for (const { id } of documents) {
        const r = byId.get(id.toLowerCase());
        if (!r || (r.sii_status === null && r.emitted === false)) continue;
        states.set(id, {
          dte_id: id,
          sii_status: (r.sii_status as string | null) ?? null,
          observed_at: (r.observed_at as string | null) ?? null,
          emitted: r.emitted === true,
        });
      }
      return { claimed, states, ...(heard ? { audiences: heard } : {}) };
    },
    async saveDocumentStates(states: DocumentWebhookState[]): Promise<void> {
      unsaved = states;
    },
    async flush(): Promise<void> {
      if (unsaved.length === 0) return;
      const states = unsaved;
      unsaved = [];
      await m.query(updateStates(1), statesParams(states));
    },
    async activeSubscriptions(keys: AudienceKey[]): Promise<Subscription[][]> {
      const out: Subscription[][] = keys.map(() => []);
      // an organization id that is not a uuid has no subscriptions (and must not fail the batch)
      const asked = keys.map((k, i) => ({ k, i })).filter(({ k }) => isUuid(k.organization_id));
      if (asked.length === 0) return out;
      // organization-wide subscriptions, and those of the document's own company. A record whose
      // document is not in dtes (every document the service issues is; only a hand-made record is
      // not) has no known company and goes to every subscription of the organization, as before.
      const rows: Row[] = await m.query(
        `SELECT k.n, ${SUBSCRIPTION_COLUMNS.map((c) => `s.${c}`).join(', ')}
           FROM unnest($1::uuid[], $2::text[], $3::uuid[]) WITH ORDINALITY AS k(org, env, dte, n)
           LEFT JOIN dtes d ON d.id = k.dte
           JOIN webhook_subscriptions s
             ON s.organization_id = k.org AND s.sii_env = k.env AND s.active
            AND (s.company_id IS NULL OR d.id IS NULL OR s.company_id = d.company_id)
          ORDER BY k.n, s.created_at, s.id`,
        audienceParams(asked.map(({ k }) => k)),
      );
      for (const r of rows) out[asked[Number(r.n) - 1]!.i]!.push(subscriptionFromRow(r));
      return out;
    },
    async insertDeliveries(rows: NewDelivery[]): Promise<NewDelivery[]> {
      // bounded statements: at most DELIVERY_INSERT_CHUNK rows (7 parameters each) per INSERT
      const ids = new Set<string>();
      for (let from = 0; from < rows.length; from += DELIVERY_INSERT_CHUNK) {
        const chunk = rows.slice(from, from + DELIVERY_INSERT_CHUNK);
        const params: unknown[] = [];
        const values = chunk.map((r) => {
          const base = params.length;
          params.push(
            r.id,
            r.subscription_id,
            r.event_id,
            r.event_type,
            r.payload,
            r.next_attempt_at,
            r.created_at,
          );
          return `(${[1, 2, 3, 4, 5, 6, 7].map((i) => `$${base + i}`).join(', ')})`;
        });
        // the states saved before go with the first chunk
        const states = unsaved;
        unsaved = [];
        const withStates = states.length > 0 ? `WITH st AS (${updateStates(params.length + 1)})\n` : '';
        const inserted: Row[] = await m.query(
          `${withStates}INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, payload, next_attempt_at, created_at)
           VALUES ${values.join(', ')}
           ON CONFLICT (subscription_id, event_id) DO NOTHING
           RETURNING id`,
          states.length > 0 ? [...params, ...statesParams(states)] : params,
        );
        for (const r of inserted) ids.add(r.id as string);
      }
      return rows.filter((r) => ids.has(r.id));
    },
  };
}

/** times a round's statement is run again when PostgreSQL chose it as a deadlock's victim */
const DEADLOCK_RETRIES = 3;

/**
 * Runs a single statement again when it was a deadlock's victim (40P01): the statement was rolled
 * back whole, so running it again is safe. A round locks several delivery rows at once, and a
 * failed round would fail its delivered marks (the deliveries sent again once their leases lapse).
 */
async function retryOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (err) {
      const e = err as { driverError?: { code?: string }; code?: string } | null;
      const code = e?.code ?? e?.driverError?.code;
      if (code !== '40P01' || i > DEADLOCK_RETRIES) throw err;
    }
  }
}

/** typeorm 1.x gives UPDATE/DELETE results as [rows, affected]; a plain row list otherwise. */
function firstRow(res: unknown): Row | undefined {
  if (Array.isArray(res) && res.length === 2 && Array.isArray(res[0]) && typeof res[1] === 'number')
    return (res[0] as Row[])[0];
  return Array.isArray(res) ? (res[0] as Row | undefined) : undefined;
}

function rowsOf(res: unknown): Row[] {
  if (Array.isArray(res) && res.length === 2 && Array.isArray(res[0]) && typeof res[1] === 'number')
    return res[0] as Row[];
  return Array.isArray(res) ? (res as Row[]) : [];
}

function affected(res: unknown): number {
  if (Array.isArray(res) && res.length === 2 && typeof res[1] === 'number') return res[1];
  return 0;
}

/** The e-mail of an organization's (first) owner, from memberships and users of the api core. */
export function pgOwnerLookup(ds: DataSource) {
  return async (organizationId: string): Promise<string | null> => {
    if (!isUuid(organizationId)) return null;
    const rows: Row[] = await ds.query(
      `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND m.role = 'owner'
        ORDER BY m.created_at LIMIT 1`,
      [organizationId],
    );
    return (rows[0]?.email as string | undefined) ?? null;
  };
}
