import { randomUUID } from 'node:crypto';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS } from '@dte/messaging';
import type { OutboxEntry } from '../outbox/enqueue';

/** Value of a dte-status record (schemas/avro/dte-status.avsc). */
export interface DteStatusRecord {
  event_id: string;
  dte_id: string;
  organization_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: number;
  sii_status: string;
  sii_glosa: string | null;
  track_id: string | null;
  observed_at: string;
  imported: boolean;
  source: string;
}

/** A dte-status record as an outbox entry (key = document id). */
export function statusOutboxEntry(
  doc: { id: string; organizationId: string; siiEnv: 'cert' | 'prod'; tipoDte: number; folio: number },
  change: { siiStatus: string; glosa?: string | null; trackId?: string | null; observedAt: Date },
): OutboxEntry & { payload: DteStatusRecord } {
  return {
    topic: PIPELINE_TOPICS.status,
    schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.status],
    key: doc.id,
    payload: {
      event_id: randomUUID(),
      dte_id: doc.id,
      organization_id: doc.organizationId,
      sii_env: doc.siiEnv,
      tipo_dte: doc.tipoDte,
      folio: doc.folio,
      sii_status: change.siiStatus,
      sii_glosa: change.glosa ?? null,
      track_id: change.trackId ?? null,
      observed_at: change.observedAt.toISOString(),
      imported: false,
      source: 'api',
    },
  };
}
