/**
 * The inbox's register events, shared by the api's REST route (routes/recepcion.ts) and the MCP tools
 * (@dte/agents recepcion-tools.ts): one copy of each rule.
 *
 * - `checkEventoBody`: the body of POST /recepcion/:id/eventos beyond its JSON Schema (accion one
 *   of REGISTER_ACTIONS, confirmar true);
 * - `registerInboxEvento`: registers an acuse (ACD, ERM) or a claim (RCD, RFP, RFT) of one inbox
 *   document at the SII register (ingresarAceptacionReclamoDoc) and records the event; a
 *   refusal answers its catalog code and writes nothing;
 */
import { isClaim, REGISTER_ACTIONS, type RegisterAction } from './estados';
import { answerRegisterEvent } from './exchange-store';
import { getInboxRow, recordInboxEvent, showInboxRow, type InboxScope } from './inbox';
import { registerOutcome } from './register-answers';
import { isSiiError, resolveEndpoints, SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { loadSigningCredential, resolveActiveCertificate } from '@dte/certificates';
import type { Principal } from '@dte/tenancy';
import type { ReceptionDeps } from './deps';
import { ApiError } from '@dte/error-catalog';

type InboxRow = NonNullable<Awaited<ReturnType<typeof getInboxRow>>>;

export interface EventoBody {
  accion: RegisterAction;
  confirmar: true;
  forzar?: boolean;
  /** ERM: where the goods or services were received (Recinto of the EnvioRecibos) */
  recinto?: string;
}

export const inboxScopeOf = (p: Principal): InboxScope => ({
  organizationId: p.organizationId,
  env: p.environment,
  companyId: p.companyId,
});

const clients = new WeakMap<ReceptionDeps, SiiClient>();

/** The SII client of an api instance (the simulator when SII_BASE_URL is set). */
export function siiClientOf(deps: ReceptionDeps): SiiClient {
  let c = clients.get(deps);
  if (!c) {
    const base = deps.config.siiBaseUrl;
    c = new SiiClient({
      endpoints: base ? simulatorEndpoints(base) : resolveEndpoints(),
      timeoutMs: deps.config.siiTimeoutMs,
    });
    clients.set(deps, c);
  }
  return c;
}

/** accion one of ACD, ERM, RCD, RFP, RFT and confirmar true (the action is irreversible). */
export function checkEventoBody(raw: unknown): EventoBody {
  const body = (raw ?? {}) as { accion?: unknown; confirmar?: unknown; forzar?: unknown; recinto?: unknown };
  if (!(REGISTER_ACTIONS as readonly unknown[]).includes(body.accion))
    throw new ApiError(
      'recepcion.evento_invalid_input',
      `accion must be one of ${REGISTER_ACTIONS.join(', ')}.`,
      { detail: { accion: body.accion ?? null } },
    );
  if (body.confirmar !== true)
    throw new ApiError(
      'recepcion.evento_invalid_input',
      'The action is irreversible at the SII: send confirmar: true to register it.',
      { detail: { campo: 'confirmar' } },
    );
  if (
    body.recinto !== undefined &&
    (typeof body.recinto !== 'string' || body.recinto.trim().length === 0 || body.recinto.length > 80)
  )
    throw new ApiError('recepcion.evento_invalid_input', 'recinto must be a text of 1 to 80 characters.', {
      detail: { campo: 'recinto' },
    });
  return {
    accion: body.accion as RegisterAction,
    confirmar: true,
    forzar: body.forzar === true,
    ...(typeof body.recinto === 'string' ? { recinto: body.recinto } : {}),
  };
}

/** The inbox document or `recepcion.no_encontrado` (404). */
export async function inboxRowOr404(deps: ReceptionDeps, p: Principal, id: string): Promise<InboxRow> {
  const row = await getInboxRow(deps.dataSource, inboxScopeOf(p), id);
  if (!row) throw new ApiError('recepcion.no_encontrado', 'No such document in the purchases inbox.');
  return row;
}

/**
 * Registers the event at the SII register and records it on the inbox document; answers the
 * document as GET /recepcion/:id shows it. Refusals (type the register does not handle, a
 * transferred document claimed without forzar, the register's own refusal, the SII down) throw
 * their catalog code before anything is written.
 */
export async function registerInboxEvento(
  deps: ReceptionDeps,
  p: Principal,
  id: string,
  body: EventoBody,
  t: Date,
) {
  const db = deps.dataSource;
  const row = await inboxRowOr404(deps, p, id);
  if (![33, 34, 43].includes(Number(row.tipo_dte)))
    throw new ApiError(
      'recepcion.rar_tipo_no_soportado',
      `The SII register does not handle type ${row.tipo_dte}.`,
    );
  const shown = showInboxRow(row, t);
  if (isClaim(body.accion) && shown.cesion.estado === 'cedida' && body.forzar !== true)
    throw new ApiError(
      'recepcion.rar_cedible_warning',
      'The SII shows this document as transferred: claim it only with forzar: true.',
      { detail: { requiresOverride: true, cesion: shown.cesion } },
    );
  const cert = await resolveActiveCertificate(db, p.organizationId, undefined, t, p.companyId);
  const credential = await loadSigningCredential(db, deps.keys, cert.id);
  let answer;
  try {
    answer = await siiClientOf(deps)
      .session(credential)
      .ingresarAceptacionReclamoDoc({
        env: p.environment,
        rutEmisor: row.rut_emisor,
        tipoDoc: Number(row.tipo_dte),
        folio: Number(row.folio),
        accionDoc: body.accion,
      });
  } catch (err) {
    if (isSiiError(err))
      throw new ApiError('sii_unavailable', `The SII register did not answer: ${err.message}`, {
        detail: { retryAfterSec: 30 },
      });
    throw err;
  }
  const outcome = registerOutcome(answer); // throws the catalog code of a refusal: nothing written
  await recordInboxEvent(db, row, p.environment, {
    accion: body.accion,
    codResp: outcome.codResp,
    descResp: outcome.descResp,
    registrado_at: t.toISOString(),
  });
  // the exchange reply the supplier is owed (ResultadoDTE, or EnvioRecibos for ERM): the event is
  // already registered at the SII, so a reply that cannot be built is logged, not an error
  try {
    await answerRegisterEvent(
      db,
      {
        organizationId: p.organizationId,
        companyId: row.company_id,
        env: p.environment,
        rut: row.rut_receptor,
      },
      row as Parameters<typeof answerRegisterEvent>[2],
      body.accion,
      { credential, now: t, ...(body.recinto ? { recinto: body.recinto } : {}) },
    );
  } catch (err) {
    deps.logger.warn({ err, documento: row.id }, 'exchange reply to the register event not built');
  }
  return showInboxRow((await getInboxRow(db, inboxScopeOf(p), row.id))!, t);
}
