import {
  statusAppliedFrom,
  statusChangeEntry,
  type DteStatusValue,
  type PipelineOutboxEntry,
} from '@dte/database';

/** Value of a dte-status record (schemas/avro/dte-status.avsc): the workers' DteStatusValue. */
export type DteStatusRecord = DteStatusValue;

/**
 * A dte-status record as an outbox entry (key = document id), published by the api: the
 * workers' statusChangeEntry with source `api`.
 */
export function statusOutboxEntry(
  doc: { id: string; organizationId: string; siiEnv: 'cert' | 'prod'; tipoDte: number; folio: number },
  change: { siiStatus: string; glosa?: string | null; trackId?: string | null; observedAt: Date },
): PipelineOutboxEntry & { payload: DteStatusRecord } {
  return statusChangeEntry(doc, { ...change, source: 'api' });
}

/**
 * A record the statement that wrote it also applied, so the projector has nothing to apply for it:
 * the api's own `queued` record (the statement that writes its document also writes that record's
 * feed row, same event id, and the document's `queued` status: @dte/emission folio-write.ts, the only place
 * the api announces `queued`), and a worker's record that says what it replaced (`appliedFrom`:
 * statusAppliedFrom of its headers, @dte/database own-status-write: the signer's `signed`, the
 * uploader's `sending`, the poller's latest answer).
 */
export function writtenWithItsDocument(
  rec: Pick<DteStatusRecord, 'source' | 'sii_status'>,
  appliedFrom: ReturnType<typeof statusAppliedFrom>,
): boolean {
  return (rec.source === 'api' && rec.sii_status === 'queued') || appliedFrom !== null;
}
