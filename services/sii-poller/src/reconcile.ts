/**
 * Reconciliation: documents whose envelope the SII may hold although we have no track id (the
 * sii-uploader ended their upload `repeated` — STATUS 99 to our own stored bytes — or
 * `unconfirmed` — no readable answer to an attempt that may have reached the SII). The
 * uploader schedules each in `sii_doc_checks`; this schedule asks QueryEstDte, which names a
 * document without a track id (issuer, receiver, type, folio, date, total), until its verdict:
 *   DOK → EPR or RPR; a rejected document (FAU "RCH - DTE Rechazado") → RCH;
 *   FAU otherwise (not received, or its send still in process), errors and other codes → asked
 *     again after backoffDelay(attempts), and after maxAttempts → `stuck`;
 *   DNK (other data under this folio) → `stuck` at once; EMP or a refused login → sin_permiso_sii.
 * A document is never uploaded again from here, not even when the SII does not know it: an
 * envelope in flight or still in process at the SII may register it later, and a second
 * envelope would use its folio twice. `stuck` hands it to an operator; refresh-status re-arms
 * the row (the api sets it active with attempts 0). Rows are claimed and recorded as sii_polls'
 * (lease on next_check_at, version guard), so a crash at any point only repeats a query.
 * Reconciled documents have no track id, so dte.emitted (which fires on a track id) is never
 * produced for them; their statuses carry track_id null.
 */
import {
  correlationHeaders,
  returnedRows,
  statusChangeEntry,
  statusDocRef,
  writeOutbox,
} from '@dte/database';
import { workDueInBatches, type Logger } from '@dte/service-runtime';
import { SiiError, type SiiSession } from '@dte/sii-client';
import type { DataSource } from 'typeorm';

import { backoffDelay, type PollerSettings } from './config';
import { BOLETA_TIPOS, boletaDocumentStatus } from './boleta-status';
import { documentQuery, loadDocs } from './documents';
import { readDocCheck, type DocCheckReading } from './verdicts';

const SOURCE = 'sii-poller';

/** Takes (under a lease, `version` grows) up to $3 documents due at $1 for a check. */
export const DUE_CHECKS_SQL = `UPDATE sii_doc_checks SET next_check_at = $2, version = version + 1, updated_at = $1
        WHERE dte_id IN (
          SELECT dte_id FROM sii_doc_checks WHERE state = 'active' AND next_check_at <= $1
           ORDER BY next_check_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING dte_id, upload_id, rut_emisor, sii_env, certificate_id, attempts, last_estado, version`;

export interface ReconcilerDeps {
  dataSource: DataSource;
  logger: Logger;
  settings: PollerSettings;
  now: () => Date;
  /** an SII session with the certificate of that id (throws when it cannot be opened) */
  session: (certificateId: string) => Promise<SiiSession>;
}

export interface CheckRow {
  dte_id: string;
  upload_id: string;
  rut_emisor: string;
  sii_env: 'cert' | 'prod';
  certificate_id: string;
  attempts: number;
  last_estado: string | null;
  version: number;
}

type CheckResult = DocCheckReading | { kind: 'unnamed' } | { kind: 'failed'; reason: string };

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * Checks every due document once (in batches of `concurrency`), starting with `first` when the
   * caller took the first batch already (the poller's tick takes it with its own); returns how many.
   */
  async tick(first?: CheckRow[]): Promise<number> {
    let taken = first;
    return workDueInBatches(
      async () => {
        const batch = taken ?? (await this.takeDue());
        taken = undefined;
        return batch;
      },
      this.deps.settings.concurrency,
      (c) => this.check(c),
      (err, c) =>
        this.deps.logger.warn(
          { err, dteId: c.dte_id },
          'sii-poller: document check failed; due again after the lease',
        ),
    );
  }

  private async takeDue(): Promise<CheckRow[]> {
    const now = this.deps.now();
    const res: unknown[] = await this.deps.dataSource.query(DUE_CHECKS_SQL, [
      now,
      new Date(now.getTime() + this.deps.settings.leaseMs),
      this.deps.settings.concurrency,
    ]);
    return returnedRows<CheckRow>(res);
  }

  /** One QueryEstDte of one document, recorded. */
  async check(c: CheckRow): Promise<void> {
    let result: CheckResult;
    try {
      const [doc] = await loadDocs(this.deps.dataSource, [c.dte_id]);
      const query = doc && documentQuery(doc, c.sii_env, c.rut_emisor);
      if (!query) result = { kind: 'unnamed' };
      else {
        const session = await this.deps.session(c.certificate_id);
        result = readDocCheck(
          BOLETA_TIPOS.includes(doc.tipo_dte)
            ? await boletaDocumentStatus(session, query)
            : await session.queryDocumentStatus(query),
        );
      }
    } catch (err) {
      if (err instanceof SiiError && (err.kind === 'auth' || err.kind === 'rejected'))
        result = { kind: 'no_permission', glosa: err.glosa ?? err.message };
      else {
        // SII failures, a certificate that cannot be opened, ...: spends the budget
        result = { kind: 'failed', reason: (err as Error).message };
        this.deps.logger.info({ dteId: c.dte_id, err: result.reason }, 'sii-poller: document check failed');
      }
    }
    await this.record(c, result);
  }

  private async record(c: CheckRow, r: CheckResult): Promise<void> {
    const s = this.deps.settings;
    const now = this.deps.now();
    switch (r.kind) {
      case 'verdict':
        return this.write(c, now, 'done', c.attempts + 1, r.estado, { estado: r.estado, glosa: r.glosa });
      case 'no_permission':
        return this.write(c, now, 'no_permission', c.attempts + 1, 'sin_permiso_sii', {
          estado: 'sin_permiso_sii',
          glosa: r.glosa,
        });
      case 'mismatch':
        return this.write(c, now, 'stuck', c.attempts + 1, r.estado, {
          estado: 'stuck',
          glosa: `El SII registra otros datos para este folio (${r.estado}${r.glosa ? ` ${r.glosa}` : ''}); requiere revisión`,
        });
      case 'unnamed':
        return this.write(c, now, 'stuck', c.attempts + 1, null, {
          estado: 'stuck',
          glosa:
            'Sin track id, y QueryEstDte no puede nombrar este documento (receptor o total); requiere revisión',
        });
      default: {
        const attempts = c.attempts + 1;
        const lastEstado = r.kind === 'failed' ? c.last_estado : r.estado;
        if (attempts < s.maxAttempts) {
          const next = new Date(now.getTime() + backoffDelay(s, attempts));
          return this.write(c, now, 'active', attempts, lastEstado, undefined, next);
        }
        return this.write(c, now, 'stuck', attempts, lastEstado, {
          estado: 'stuck',
          glosa:
            `El SII no informa este documento después de ${attempts} consultas (último estado ` +
            `${lastEstado ?? 'ninguno'}); no se reenvía para no usar el folio dos veces`,
        });
      }
    }
  }

  /** Records a check's outcome and its status message, unless the row was re-armed or taken since. */
  private async write(
    c: CheckRow,
    now: Date,
    state: 'active' | 'done' | 'stuck' | 'no_permission',
    attempts: number,
    lastEstado: string | null,
    publish?: { estado: string; glosa?: string },
    nextCheckAt: Date = now,
  ): Promise<void> {
    let requestId: string | undefined;
    await this.deps.dataSource.transaction(async (m) => {
      const res: unknown[] = await m.query(
        `UPDATE sii_doc_checks SET state = $3, attempts = $4, next_check_at = $5, last_estado = $6,
                last_glosa = COALESCE($7, last_glosa), updated_at = $8
          WHERE dte_id = $1 AND version = $2 RETURNING dte_id`,
        [c.dte_id, c.version, state, attempts, nextCheckAt, lastEstado, publish?.glosa ?? null, now],
      );
      if (returnedRows(res).length !== 1) return; // re-armed meanwhile: this answer is stale
      await m.query('UPDATE dtes SET sii_last_polled = $2 WHERE id = $1', [c.dte_id, now]);
      if (!publish) return;
      const [d] = await loadDocs(m, [c.dte_id]);
      if (!d) return;
      requestId = d.request_id ?? undefined;
      await writeOutbox(m, [
        {
          ...statusChangeEntry(statusDocRef(d), {
            siiStatus: publish.estado,
            glosa: publish.glosa ?? null,
            trackId: null,
            observedAt: now,
            source: SOURCE,
          }),
          // the request id stored with the document (the reconciled envelope never reached this process)
          headers: correlationHeaders({ 'x-request-id': requestId ?? '' }, d.id),
        },
      ]);
    });
    if (publish)
      this.deps.logger.info(
        { dteId: c.dte_id, requestId, uploadId: c.upload_id, estado: publish.estado, state },
        'sii-poller: reconciled document status published',
      );
  }
}
