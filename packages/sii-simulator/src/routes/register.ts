/**
 * The acceptance/claim register (WSREGISTRORECLAMODTE, SII WS document v1.2), SOAP
 * document/literal, token in `Cookie: TOKEN=…`. A missing or invalid token gets the SOAP Fault
 * "Error de Autenticacion: TOKEN invalido" (HTTP 500), as Odoo reports it.
 *
 * Documents are those the simulator accepted (EPR with or without reparos) once their send is
 * processed. Rules (codResp): 1 wrong issuer RUT/DV, 2 wrong folio, 3 type not 33/34/43, 4
 * invalid action, 10 issued before 2017-01-14, 18 not received, 17 (ingresar) / 14 (queries)
 * the user is not authorized for the receiver (or the issuer), 8 more than 8 days since the SII
 * received it, then the event rules: after a claim (RCD/RFP/RFT) ERM gives 6, ACD gives 12, the
 * same claim 7, RFP after RFT (or the reverse) 19, another claim is recorded; after ACD, claims
 * give 11, ACD again 7, ERM is recorded; after ERM, claims give 13, ERM again 7, ACD is recorded.
 */
import { rutCheckDigit } from '@dte/engine';
import type { Context } from 'koa';
import { chileDateTime } from '../chile-time';
import { applyFault, cookieToken, readBody, xmlReply } from '../http';
import { isFinal } from '../progress';
import { findSeededPurchase, windowClosed } from '../purchase-register';
import { joinRut, splitRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import { elements, literalResponse, parseSoapCall, soapFault, SoapRequestError } from '../soap';
import type { DocumentRecord, SiiEnv } from '../types';
import type { Operation } from '../triggers';

const METHODS = [
  'ingresarAceptacionReclamoDoc',
  'listarEventosHistDoc',
  'consultarDocDteCedible',
  'consultarFechaRecepcionSii',
] as const;
type Method = (typeof METHODS)[number];

const ACTIONS: Record<string, string> = {
  ACD: 'Acepta Contenido del Documento',
  RCD: 'Reclamo al Contenido del Documento',
  ERM: 'Otorga Recibo de Mercaderias o Servicios',
  RFP: 'Reclamo por Falta Parcial de Mercaderias',
  RFT: 'Reclamo por Falta Total de Mercaderias',
};
const CLAIMS = ['RCD', 'RFP', 'RFT'];

const DESC: Record<number, string> = {
  0: 'Accion Completada OK',
  1: 'Rut Emisor Erroneo',
  2: 'Numero de Folio Erroneo',
  3: 'Tipo de documento no corresponde',
  4: 'Accion invalida',
  7: 'Evento registrado previamente',
  8: 'Pasados 8 dias despues de la recepcion no es posible registrar reclamos o eventos',
  10: 'Documento no emitido y/o recibido en el SII desde el 14 de Enero de 2017 en adelante',
  11: 'No se puede reclamar DTE previamente aceptado',
  13: 'No se puede reclamar DTE previamente registrado como que acuso recibo mercaderia',
  14: 'Accion autorizada solo para empresa receptora o emisora',
  15: 'Listado de eventos del documento',
  16: 'Documento no presenta eventos de reclamos o acuse de recibo',
  17: 'Accion autorizada solo para empresa receptora',
  18: 'Documento no ha sido recibido',
  19: 'Reclamo de mercaderias ya realizado',
  20: 'Tipo de documento no es cedible',
  22: 'No existe registro de reclamo o de recepcion de mercaderia o servicios',
  23: 'DTE Cedible, sin reclamos',
  24: 'DTE No Cedible, DTE reclamado por el receptor',
  25: 'DTE Cedible, habiendo pasado 8 dias se entiende dado acuse de recibo',
};

/** DD-MM-YYYY HH:MM:SS */
function siiDateTime(ms: number): string {
  const d = chileDateTime(ms);
  return `${d.slice(8, 10)}-${d.slice(5, 7)}-${d.slice(0, 4)} ${d.slice(11, 19)}`;
}

export async function registerService(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  const raw = (await readBody(ctx)).toString('utf8');
  let call;
  try {
    call = parseSoapCall(raw);
  } catch (err) {
    const msg = err instanceof SoapRequestError ? err.message : String(err);
    return xmlReply(ctx, soapFault('S:Client', msg), 500);
  }
  const method = call.method as Method;
  if (!METHODS.includes(method))
    return xmlReply(ctx, soapFault('S:Client', `Cannot find dispatch method for {${call.method}}`), 500);
  if (await applyFault(ctx, sim.state, env, method as Operation)) return;
  const now = sim.state.now();
  const e = sim.state.env[env];
  const token = checkToken(e, cookieToken(ctx), now);
  if (!token.ok) return xmlReply(ctx, soapFault('S:Server', 'Error de Autenticacion: TOKEN invalido'), 500);

  const reply = (code: number, desc = DESC[code] ?? '', extra = '') =>
    xmlReply(
      ctx,
      literalResponse(
        method,
        `<return>${elements([
          ['codResp', code],
          ['descResp', desc.slice(0, 70)],
        ])}${extra}</return>`,
      ),
    );
  const p = call.params;
  const rutBody = (p.rutEmisor ?? '').trim();
  const dv = (p.dvEmisor ?? '').trim();
  const tipo = Number((p.tipoDoc ?? '').trim());
  const folioText = (p.folio ?? '').trim();

  const emisor = joinRut(rutBody, dv);
  const badRut = !emisor || Number(rutBody) < 1000 || rutBody.length > 8 || rutCheckDigit(rutBody) !== dv;
  if (method === 'consultarFechaRecepcionSii') {
    // a plain string: the reception date-time, or empty when there is no such document
    const d =
      !badRut && /^\d{1,10}$/.test(folioText)
        ? visible(sim, env, emisor!, tipo, Number(folioText), now)
        : undefined;
    return xmlReply(ctx, literalResponse(method, `<return>${d ? siiDateTime(d.receivedAt) : ''}</return>`));
  }
  if (badRut) return reply(1);
  if (!/^\d{1,10}$/.test(folioText)) return reply(2);
  if (![33, 34, 43].includes(tipo)) return reply(method === 'consultarDocDteCedible' ? 20 : 3);
  const accion = (p.accionDoc ?? '').trim();
  if (method === 'ingresarAceptacionReclamoDoc' && !ACTIONS[accion]) return reply(4);
  const d = visible(sim, env, emisor!, tipo, Number(folioText), now);
  if (!d) return reply(18);
  if (d.fchEmis < '2017-01-14') return reply(10);
  const user = token.token.rut;
  const forReceiver = authorize(sim, e, user, d.rutReceptor);
  if (method === 'ingresarAceptacionReclamoDoc') {
    if (!forReceiver) return reply(17);
  } else if (!forReceiver && !e.isAuthorized(user, d.rutEmisor)) return reply(14);

  const codes = d.events.map((ev) => ev.codEvento);
  const claim = codes.find((c) => CLAIMS.includes(c));
  const windowOpen = !windowClosed(d.receivedAt, now);

  if (method === 'listarEventosHistDoc') {
    if (d.events.length === 0) return reply(16);
    const lista = d.events
      .map((ev) => {
        const r = splitRut(ev.rutResponsable);
        return `<listaEventosDoc>${elements([
          ['codEvento', ev.codEvento],
          ['descEvento', ev.descEvento],
          ['dvResponsable', r.dv],
          ['fechaEvento', siiDateTime(ev.at)],
          ['rutResponsable', r.body],
        ])}</listaEventosDoc>`;
      })
      .join('');
    return reply(15, DESC[15], lista);
  }
  if (method === 'consultarDocDteCedible') {
    if (claim) return reply(24);
    if (codes.includes('ACD') || codes.includes('ERM')) return reply(23);
    return reply(windowOpen ? 22 : 25);
  }

  // ingresarAceptacionReclamoDoc
  if (!windowOpen) return reply(8);
  const record = () => {
    d.events.push({ codEvento: accion, descEvento: ACTIONS[accion], rutResponsable: user, at: now });
    return reply(0);
  };
  if (codes.includes(accion)) return reply(7);
  if (claim) {
    if (accion === 'ERM')
      return reply(6, `No se puede acusar recibo de mercaderia de DTE reclamado por ${claim}`);
    if (accion === 'ACD')
      return reply(12, `No se puede dar por aceptado DTE previamente rechazado por ${claim}`);
    if ((accion === 'RFP' || accion === 'RFT') && codes.some((c) => c === 'RFP' || c === 'RFT'))
      return reply(19);
    return record();
  }
  if (codes.includes('ACD') && CLAIMS.includes(accion)) return reply(11);
  if (codes.includes('ERM') && CLAIMS.includes(accion)) return reply(13);
  return record();
}

/** the document as the register sees it: accepted (with or without reparos) and processed */
function visible(
  sim: Sim,
  env: SiiEnv,
  emisor: string,
  tipo: number,
  folio: number,
  now: number,
): DocumentRecord | undefined {
  const e = sim.state.env[env];
  const d = e.documents.get(e.documentKey(emisor, tipo, folio));
  if (!d) return findSeededPurchase(e, env, emisor, tipo, folio);
  if (d.result === 'RECHAZADO') return undefined;
  const u = e.uploads.get(d.trackId);
  return u && isFinal(u, now, sim.options.timings) ? d : undefined;
}
