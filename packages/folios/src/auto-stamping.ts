import { isServiceError } from '@dte/error-catalog';
import type { Principal } from '@dte/tenancy';
import type { FoliosDeps } from './deps';
import { requestCaf } from './caf-request';

export interface AutoStampingOutcome {
  companyId: string;
  tipoDte: number;
  remaining: number;
  /** granted: a CAF was requested and stored; skipped: another request holds the lock; failed: see code */
  result: 'granted' | 'skipped' | 'failed';
  code?: string;
  cafId?: string;
}

/**
 * One sweep of automatic stamping (PUT /caf/auto): for each enabled (company, type) in production
 * whose current folios (not deleted, not expired) are at or below its threshold, request
 * `cantidad` folios from the SII exactly as POST /caf/request does — same Redis lock, so several
 * replicas sweeping at once ask once. Failures are reported, never retried here: the next sweep
 * tries again (after the lock expires).
 */
export async function runAutoStamping(deps: FoliosDeps, now: Date): Promise<AutoStampingOutcome[]> {
  const due: {
    organization_id: string;
    company_id: string;
    tipo_dte: number;
    threshold: number;
    cantidad: number;
    remaining: string;
  }[] = await deps.dataSource.query(
    `SELECT s.organization_id, s.company_id, s.tipo_dte, s.threshold, s.cantidad,
              COALESCE(SUM(c.hasta - c.next_folio + 1) FILTER (
                WHERE c.id IS NOT NULL AND c.next_folio <= c.hasta AND (c.expires_at IS NULL OR c.expires_at > $1)), 0) AS remaining
         FROM caf_auto_settings s
         LEFT JOIN cafs c ON c.company_id = s.company_id AND c.tipo_dte = s.tipo_dte
                         AND c.environment = 'prod' AND c.deleted_at IS NULL
        WHERE s.enabled
        GROUP BY s.organization_id, s.company_id, s.tipo_dte, s.threshold, s.cantidad
       HAVING COALESCE(SUM(c.hasta - c.next_folio + 1) FILTER (
                WHERE c.id IS NOT NULL AND c.next_folio <= c.hasta AND (c.expires_at IS NULL OR c.expires_at > $1)), 0) <= s.threshold`,
    [now],
  );
  const out: AutoStampingOutcome[] = [];
  for (const d of due) {
    const principal: Principal = {
      kind: 'api_key',
      organizationId: d.organization_id,
      companyId: d.company_id,
      environment: 'prod',
      scopes: null,
      role: null,
      actorId: 'auto-stamping',
    };
    const base = { companyId: d.company_id, tipoDte: d.tipo_dte, remaining: Number(d.remaining) };
    try {
      const caf = await requestCaf(
        deps,
        principal,
        { tipo_dte: d.tipo_dte, cantidad: d.cantidad },
        undefined,
        now,
      );
      out.push({ ...base, result: 'granted', cafId: caf.id });
    } catch (err) {
      const code = isServiceError(err) ? err.code : 'internal_error';
      if (code === 'caf.request_in_flight') out.push({ ...base, result: 'skipped', code });
      else {
        deps.logger.warn({ err, ...base }, 'automatic stamping failed');
        out.push({ ...base, result: 'failed', code });
      }
    }
  }
  return out;
}
