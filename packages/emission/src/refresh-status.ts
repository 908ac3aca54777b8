import { randomUUID } from 'node:crypto';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS } from '@dte/messaging';
import { classify } from '@dte/status';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { enqueueOutbox } from '@dte/pipeline';
import { DTE_COLUMNS, type DteRow, type DteScope } from './dte-row';
import { getDteOr404 } from './reads';

/** Statuses refresh-status unblocks (no verdict and nobody polling). */
export const REFRESHABLE = ['stuck', 'sin_permiso_sii'] as const;
/** Outcomes without a track id that only an operator can resolve. */
const OPERATOR_REVIEW = ['emision_fallida', 'envio_repetido'];

export type RefreshOutcome =
  | { status: 202; body: { id: string; status: 'refresh_enqueued' } }
  | {
      status: 200;
      body: { id: string; status: 'nothing_to_do'; sii_status: string; estado: ReturnType<typeof classify> };
    };

/**
 * POST /dtes/:id/refresh-status. A stuck or sin_permiso_sii document with a track id, in an
 * organization with a current certificate, gets a re-poll request: a dte.uploaded record with
 * refresh = true (same upload_id and track_id, dte_ids = [this document], certificate_id = the
 * organization's active certificate), written to the outbox in the transaction that locks the
 * row, so the poller receives it exactly when the answer is 202. A document under reconciliation
 * (no track id, in the poller's sii_doc_checks) has that row re-armed in the same transaction
 * instead: active, attempts 0, due now, with that certificate. Otherwise, without a track id:
 * dte.refresh_status.no_track_id (operator_review for emision_fallida/envio_repetido). Anything
 * else (polling still active, or a verdict): 200, nothing to do.
 */
export async function refreshStatus(
  db: DataSource,
  scope: DteScope,
  id: string,
  now: Date,
): Promise<RefreshOutcome> {
  await getDteOr404(db, scope, id);
  return db.transaction(async (m) => {
    const rows: DteRow[] = await m.query(`SELECT ${DTE_COLUMNS} FROM dtes WHERE id = $1 FOR UPDATE`, [id]);
    const row = rows[0];
    // a document reconciled without a track id (the SII may hold its envelope): its per-document
    // QueryEstDte schedule (the sii-poller's sii_doc_checks) is what refresh re-arms
    const check: { state: string }[] = row.track_id
      ? []
      : await m.query('SELECT state FROM sii_doc_checks WHERE dte_id = $1 FOR UPDATE', [id]);
    if (!row.track_id && !check[0]) {
      const review = OPERATOR_REVIEW.includes(row.sii_status);
      throw new ApiError(
        'dte.refresh_status.no_track_id',
        review
          ? `The document ended in ${row.sii_status} without a track id: it needs an operator's review.`
          : 'The document has not reached the SII yet (no track id); the emission workflow is still running.',
        {
          nextAction: review ? 'operator_review' : 'wait_for_emit_workflow',
          detail: { sii_status: row.sii_status },
        },
      );
    }
    if (!(REFRESHABLE as readonly string[]).includes(row.sii_status)) {
      return {
        status: 200,
        body: {
          id: row.id,
          status: 'nothing_to_do',
          sii_status: row.sii_status,
          estado: classify(row.sii_status),
        },
      };
    }
    const certs: { id: string }[] = await m.query(
      `SELECT id FROM certificates
        WHERE organization_id = $1 AND deleted_at IS NULL AND not_after > $2
        ORDER BY is_default DESC, created_at DESC LIMIT 1`,
      [row.organization_id, now],
    );
    if (!certs[0]) {
      throw new ApiError(
        'dte.refresh_status.no_cert',
        'The organization has no active certificate to query the SII with.',
      );
    }
    const company: { rut: string }[] = await m.query('SELECT rut FROM companies WHERE id = $1', [
      row.company_id,
    ]);
    if (!row.track_id) {
      await m.query(
        `UPDATE sii_doc_checks SET state = 'active', attempts = 0, next_check_at = $2, certificate_id = $3,
                version = version + 1, updated_at = $2
          WHERE dte_id = $1`,
        [row.id, now, certs[0].id],
      );
      return { status: 202, body: { id: row.id, status: 'refresh_enqueued' } };
    }
    const uploadId = row.upload_id ?? row.id;
    await enqueueOutbox(m, [
      {
        topic: PIPELINE_TOPICS.uploaded,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.uploaded],
        key: uploadId,
        payload: {
          event_id: randomUUID(),
          upload_id: uploadId,
          organization_id: row.organization_id,
          company_id: row.company_id,
          rut_emisor: company[0]?.rut ?? row.rut_emisor,
          sii_env: row.sii_env,
          certificate_id: certs[0].id,
          track_id: row.track_id,
          dte_ids: [row.id],
          uploaded_at: now.toISOString(),
          refresh: true,
        },
      },
    ]);
    return { status: 202, body: { id: row.id, status: 'refresh_enqueued' } };
  });
}
