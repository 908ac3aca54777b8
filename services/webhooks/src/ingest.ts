import crypto from 'node:crypto';
import { eventsForTransition, shouldApply, type WebhookEventType } from '@dte/status';
import type { Clock } from './clock';
import { buildEnvelope, eventIdFor } from './envelope';
import type { Delivery, DueAttempt, SiiEnv, Subscription } from './model';

/** Value of the dte-status topic (schemas/avro/dte-status.avsc). */
export interface DteStatusRecord {
  event_id: string;
  dte_id: string;
  organization_id: string;
  sii_env: SiiEnv;
  tipo_dte: number;
  folio: number;
  sii_status: string;
  sii_glosa?: string | null;
  track_id?: string | null;
  observed_at: string;
  imported?: boolean;
  source: string;
}

/** What the webhooks service remembers of a document to apply the no-going-backwards rule. */
export interface DocumentWebhookState {
  dte_id: string;
  sii_status: string | null;
  observed_at: string | null;
  /** dte.emitted already produced for this document */
  emitted: boolean;
}

export type NewDelivery = Pick<
  Delivery,
  'id' | 'subscription_id' | 'event_id' | 'event_type' | 'payload' | 'next_attempt_at' | 'created_at'
>;

/** Whose subscriptions hear a record: its organization and environment, and its document (for the company). */
export interface AudienceKey {
  organization_id: string;
  sii_env: SiiEnv;
  dte_id: string;
}

/** consumer name of the dte-status records' event ids in processed_events */
export const STATUS_CONSUMER = 'webhooks.status';

/**
 * One transaction of the ingestion of a batch of dte-status records. Every method works on the
 * whole batch at once (one statement each in PostgreSQL).
 */
export interface IngestTx {
  /**
   * claims the records' event ids (a redelivery or replay finds its id taken) and reads the
   * documents' states, locked until the transaction ends; returns the ids claimed by this call and
   * the states (a document never seen, or seen with nothing to remember, is absent). Only for
   * organizations that have a webhook subscription (any, active or not, read in the same
   * statement): the events of an organization without one are not claimed and its documents get
   * no state, so it costs one read and leaves nothing behind. Its first subscription hears each
   * document from the next status on (with `dte.emitted` then, for a document with a track id, as
   * for any document first seen).
   */
  claimEvents(
    events: OrganizationItem[],
    documents: OrganizationItem[],
    /**
     * the audiences of the records that may produce an event: a store may read their active
     * subscriptions in the same statement and return them as `audiences` (in the keys' order), so
     * that `activeSubscriptions` is not asked
     */
    audiences?: AudienceKey[],
  ): Promise<{
    claimed: Set<string>;
    states: Map<string, DocumentWebhookState>;
    audiences?: Subscription[][];
  }>;
  /** the documents' new states (written at the latest when the transaction ends) */
  saveDocumentStates(states: DocumentWebhookState[]): Promise<void>;
  /**
   * for each key, in order: the active subscriptions of the organization in that environment
   * that hear the document (the organization-wide ones and those of the document's company)
   */
  activeSubscriptions(keys: AudienceKey[]): Promise<Subscription[][]>;
  /** inserts the rows not already there (unique per subscription and event id); returns those inserted */
  insertDeliveries(rows: NewDelivery[]): Promise<NewDelivery[]>;
}

/** an event id or a document id, with its organization */
export interface OrganizationItem {
  id: string;
  organization_id: string;
}

export interface IngestStore {
  inTransaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T>;
}

/** The events one status record produces, given what is known of its document (rules of @dte/status). */
export function eventsOf(
  record: DteStatusRecord,
  state: DocumentWebhookState | null,
): { apply: boolean; events: WebhookEventType[] } {
  if (record.imported) return { apply: false, events: [] };
  const current =
    state?.sii_status && state.observed_at
      ? { sii_status: state.sii_status, observed_at: state.observed_at }
      : null;
  const apply = shouldApply(current, { sii_status: record.sii_status, observed_at: record.observed_at });
  const emittedNow = Boolean(record.track_id) && !state?.emitted;
  const events = eventsForTransition(record.sii_status, { emittedNow });
  return { apply, events: apply ? events : events.filter((e) => e === 'dte.emitted') };
}

/** One dte-status record: a batch of one (ingestStatuses). Returns the first attempts to run. */
export function ingestStatus(
  record: DteStatusRecord,
  store: IngestStore,
  clock: Clock,
): Promise<DueAttempt[]> {
  return ingestStatuses([record], store, clock);
}

/**
 * Turns a batch of dte-status records (in stream order) into delivery records, in ONE transaction
 * with the documents' states, with the outcome of handling them one by one in order: one
 * multi-row claim of the event ids (a record seen before, in this batch or an earlier one, adds
 * nothing), one locking read of the documents' states, the decisions taken in memory record by
 * record (so several records of one document in a batch see each other), one read of the
 * subscriptions that hear them, one multi-row insert of the deliveries (unique per subscription
 * and event id), one multi-row update of the states. (PostgreSQL: the claim and the locking read
 * are one statement, and the update of the states goes with the insert of the deliveries.) Imported documents produce nothing and
 * are not recorded. Returns the first attempts to run, in record order.
 */
export async function ingestStatuses(
  records: DteStatusRecord[],
  store: IngestStore,
  clock: Clock,
  /** told, once the transaction committed, of each record handled here and the attempts it created */
  onIngested?: (record: DteStatusRecord, due: DueAttempt[]) => void,
): Promise<DueAttempt[]> {
  const live = records.filter((r) => !r.imported);
  if (live.length === 0) return [];
  const handled: DteStatusRecord[] = [];
  // delivery id → the event id of the record that created it
  const sourceOf = new Map<string, string>();
  const due = await store.inTransaction(async (tx) => {
    handled.length = 0;
    sourceOf.clear();
    // whose subscriptions may hear the batch: the records that produce an event in the best case
    // (a first record with a track id, a status that is not silent), read with the claim
    const keyOf = (r: DteStatusRecord) => `${r.organization_id}\u0000${r.sii_env}\u0000${r.dte_id}`;
    const keys = new Map<string, AudienceKey>();
    for (const r of live)
      if (
        !keys.has(keyOf(r)) &&
        eventsForTransition(r.sii_status, { emittedNow: Boolean(r.track_id) }).length
      )
        keys.set(keyOf(r), { organization_id: r.organization_id, sii_env: r.sii_env, dte_id: r.dte_id });
    // the documents of every record are locked (those of records seen before too: no harm)
    const {
      claimed,
      states,
      audiences: read,
    } = await tx.claimEvents(
      [...new Map(live.map((r) => [r.event_id, r.organization_id]))].map(([id, org]) => ({
        id,
        organization_id: org,
      })),
      [...new Map(live.map((r) => [r.dte_id, r.organization_id]))].map(([id, org]) => ({
        id,
        organization_id: org,
      })),
      [...keys.values()],
    );
    // a duplicate within the batch is handled once: at its first occurrence
    const mine = live.filter((r) => claimed.delete(r.event_id));
    handled.push(...mine);
    if (mine.length === 0) return [];
    const touched = new Set<string>();
    const produced: { record: DteStatusRecord; events: WebhookEventType[] }[] = [];
    for (const record of mine) {
      const state = states.get(record.dte_id) ?? null;
      const { apply, events } = eventsOf(record, state);
      states.set(record.dte_id, {
        dte_id: record.dte_id,
        sii_status: apply || !state ? record.sii_status : state.sii_status,
        observed_at: apply || !state ? record.observed_at : state.observed_at,
        emitted: Boolean(state?.emitted) || events.includes('dte.emitted'),
      });
      touched.add(record.dte_id);
      if (events.length > 0) produced.push({ record, events });
    }
    await tx.saveDocumentStates([...touched].sort().map((id) => states.get(id)!));
    if (produced.length === 0) return [];

    let subsOf: Map<string, Subscription[]>;
    if (read) subsOf = new Map([...keys.keys()].map((k, i) => [k, read[i] ?? []]));
    else {
      // a store that does not read them with the claim: those of the records that produced events
      const asked = new Map<string, AudienceKey>();
      for (const { record: r } of produced)
        if (!asked.has(keyOf(r))) asked.set(keyOf(r), keys.get(keyOf(r))!);
      const audiences = await tx.activeSubscriptions([...asked.values()]);
      subsOf = new Map([...asked.keys()].map((k, i) => [k, audiences[i] ?? []]));
    }

    const nowMs = clock.now();
    const now = new Date(nowMs);
    const rows: NewDelivery[] = [];
    const orgOf = new Map<string, string>();
    for (const { record, events } of produced) {
      const subs = subsOf.get(keyOf(record)) ?? [];
      for (const type of events) {
        const eventId = eventIdFor(type, record.event_id, record.dte_id);
        const payload = JSON.stringify(buildEnvelope(eventId, type, record, nowMs));
        for (const s of subs) {
          if (!s.events.includes(type)) continue;
          const id = crypto.randomUUID();
          orgOf.set(id, record.organization_id);
          sourceOf.set(id, record.event_id);
          rows.push({
            id,
            subscription_id: s.id,
            event_id: eventId,
            event_type: type,
            payload,
            next_attempt_at: now,
            created_at: now,
          });
        }
      }
    }
    const inserted = rows.length ? await tx.insertDeliveries(rows) : [];
    return inserted.map((d) => ({
      event_id: crypto.randomUUID(),
      delivery_id: d.id,
      subscription_id: d.subscription_id,
      attempt: 1,
      due_at: now.toISOString(),
      organization_id: orgOf.get(d.id)!,
    }));
  });
  if (onIngested)
    for (const record of handled)
      onIngested(
        record,
        due.filter((d) => sourceOf.get(d.delivery_id) === record.event_id),
      );
  return due;
}
