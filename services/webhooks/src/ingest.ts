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

export interface IngestTx {
  /** the document's state, locked until the transaction ends */
  documentState(dteId: string): Promise<DocumentWebhookState | null>;
  saveDocumentState(state: DocumentWebhookState): Promise<void>;
  /**
   * active subscriptions of the organization in that environment that hear the document: the
   * organization-wide ones and those of the document's company
   */
  activeSubscriptions(organizationId: string, env: SiiEnv, dteId?: string): Promise<Subscription[]>;
  /** inserts the rows not already there (unique per subscription and event id); returns those inserted */
  insertDeliveries(rows: NewDelivery[]): Promise<NewDelivery[]>;
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

/**
 * Turns one dte-status record into delivery records, in one transaction with the document's
 * state so a replayed or older record produces nothing new. Returns the first attempts to run.
 */
export async function ingestStatus(
  record: DteStatusRecord,
  store: IngestStore,
  clock: Clock,
): Promise<DueAttempt[]> {
  if (record.imported) return [];
  return store.inTransaction(async (tx) => {
    const state = await tx.documentState(record.dte_id);
    const { apply, events } = eventsOf(record, state);
    await tx.saveDocumentState({
      dte_id: record.dte_id,
      sii_status: apply || !state ? record.sii_status : state.sii_status,
      observed_at: apply || !state ? record.observed_at : state.observed_at,
      emitted: Boolean(state?.emitted) || events.includes('dte.emitted'),
    });
    if (events.length === 0) return [];
    const subs = await tx.activeSubscriptions(record.organization_id, record.sii_env, record.dte_id);
    const nowMs = clock.now();
    const now = new Date(nowMs);
    const rows: NewDelivery[] = [];
    for (const type of events) {
      const eventId = eventIdFor(type, record.event_id, record.dte_id);
      const payload = JSON.stringify(buildEnvelope(eventId, type, record, nowMs));
      for (const s of subs) {
        if (!s.events.includes(type)) continue;
        rows.push({
          id: crypto.randomUUID(),
          subscription_id: s.id,
          event_id: eventId,
          event_type: type,
          payload,
          next_attempt_at: now,
          created_at: now,
        });
      }
    }
    const inserted = rows.length ? await tx.insertDeliveries(rows) : [];
    return inserted.map((d) => ({
      event_id: crypto.randomUUID(),
      delivery_id: d.id,
      subscription_id: d.subscription_id,
      attempt: 1,
      due_at: now.toISOString(),
      organization_id: record.organization_id,
    }));
  });
}
