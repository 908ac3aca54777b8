import { entero, mes } from '@dte/es-cl';
import type { DataSource } from 'typeorm';

/** One e-mail of the billing notices (the caller's transport sends it: SMTP in the api). */
export interface NoticeMail {
  to: string[];
  subject: string;
  text: string;
}

export type SendMail = (mail: NoticeMail) => Promise<void>;

/** A notice is dropped (kept with its last error) after this many failed sendings. */
export const MAX_NOTICE_ATTEMPTS = 6;

/** Notices sent per sweep. */
const BATCH = 20;

/** `2026-11` → `noviembre de 2026` (the month as the dashboard shows it: @dte/es-cl's `mes`) */
export const mesEnPalabras = mes;

interface NoticeRow {
  organization_id: string;
  sii_env: 'cert' | 'prod';
  periodo: string;
  threshold: number;
  used: number;
  monthly_limit: number;
  attempts: number;
  organization: string;
  owners: string[] | null;
}

/** The e-mail of one notice, in Spanish (Chile). */
export function noticeMail(n: Omit<NoticeRow, 'attempts' | 'owners'>, to: string[]): NoticeMail {
  const ambiente = n.sii_env === 'prod' ? 'producción' : 'certificación';
  const periodo = mes(n.periodo);
  const full = n.threshold >= 100;
  return {
    to,
    subject: full
      ? `Plan agotado: ${n.organization} alcanzó su límite de documentos de ${periodo}`
      : `Aviso de consumo: ${n.organization} usó el ${n.threshold} % de sus documentos de ${periodo}`,
    text: [
      `La organización ${n.organization} emitió ${entero(n.used)} de ${entero(n.monthly_limit)} documentos`,
      `permitidos en ${ambiente} durante ${periodo} (${n.threshold} % del límite mensual de su plan).`,
      '',
      full
        ? 'Las nuevas emisiones de este mes serán rechazadas (402 billing.free_tier_exceeded) hasta que se amplíe el plan.'
        : 'Al llegar al 100 % las nuevas emisiones del mes serán rechazadas hasta que se amplíe el plan.',
      'El consumo del mes se ve en el panel, página «Plan y consumo».',
    ].join('\n'),
  };
}

/**
 * Sends the pending 80 % / 100 % notices (written by the emission's statement, once per threshold
 * and month) to the organization's owners. Each notice is claimed with FOR UPDATE SKIP LOCKED in a
 * transaction of its own, so several api replicas can sweep; sent_at marks it done, a failure
 * counts an attempt (after MAX_NOTICE_ATTEMPTS it is left with its last error). Returns how many
 * were sent.
 */
export async function sendPendingNotices(db: DataSource, send: SendMail): Promise<number> {
  let sent = 0;
  for (let i = 0; i < BATCH; i++) {
    const done = await db.transaction(async (m) => {
      const rows: NoticeRow[] = await m.query(
        `SELECT n.organization_id, n.sii_env, n.periodo, n.threshold, n.used, n.monthly_limit, n.attempts,
                coalesce(o.name, o.rut, o.id::text) AS organization,
                (SELECT array_agg(u.email ORDER BY u.email) FROM memberships mb JOIN users u ON u.id = mb.user_id
                  WHERE mb.organization_id = n.organization_id AND mb.role = 'owner') AS owners
           FROM billing_notices n JOIN organizations o ON o.id = n.organization_id
          WHERE n.sent_at IS NULL AND n.attempts < $1
          ORDER BY n.created_at
          LIMIT 1
          FOR UPDATE OF n SKIP LOCKED`,
        [MAX_NOTICE_ATTEMPTS],
      );
      const n = rows[0];
      if (!n) return undefined;
      const keyArgs = [n.organization_id, n.sii_env, n.periodo, n.threshold];
      const keyWhere = 'organization_id = $1 AND sii_env = $2 AND periodo = $3 AND threshold = $4';
      try {
        if (!n.owners?.length) throw new Error('the organization has no owner to notify');
        await send(noticeMail(n, n.owners));
        await m.query(
          `UPDATE billing_notices SET sent_at = now(), attempts = attempts + 1 WHERE ${keyWhere}`,
          keyArgs,
        );
        return true;
      } catch (err) {
        await m.query(
          `UPDATE billing_notices SET attempts = attempts + 1, last_error = $5 WHERE ${keyWhere}`,
          [...keyArgs, (err as Error).message.slice(0, 500)],
        );
        return false;
      }
    });
    if (done === undefined) break;
    if (done) sent++;
  }
  return sent;
}
