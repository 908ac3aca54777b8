/**
 * The register of acceptance and claims (Ley 19.983 / 20.956), SII WS document v1.2 of 2017
 * (PROTOCOL.md §6): document/literal SOAP at the ws2 (certification) / ws1 (production) URL,
 * token in `Cookie: TOKEN=…`. Every method takes rutEmisor, dvEmisor, tipoDoc (33, 34, 43) and
 * folio; the reply is `<return>` with codResp and descResp (and listaEventosDoc for the
 * history), or a plain string (consultarFechaRecepcionSii).
 *
 * codResp values are answers, not errors: the methods return them. `-1` (internal error, try
 * later) throws a transient SiiError; a bad token comes back as a SOAP Fault and throws `auth`.
 */
import type { Element } from '@xmldom/xmldom';

import type { SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { splitRut } from './rut';
import { literalEnvelope, readLiteralReturn } from './soap';
import { endpointsOf, postSoap, type CallOptions, type SiiTransport } from './transport';
import { childElements, childText, excerpt, localName } from './xml';

/** Document types the register accepts. */
export const REGISTER_TIPOS = [33, 34, 43] as const;

/** ACD accept the content; RCD claim the content; ERM receipt of goods or services; RFP/RFT partial/total lack of goods. */
export type AccionDoc = 'ACD' | 'RCD' | 'ERM' | 'RFP' | 'RFT';
export const ACCIONES_DOC: readonly AccionDoc[] = ['ACD', 'RCD', 'ERM', 'RFP', 'RFT'];

export interface RegisterDocRef extends CallOptions {
  env: SiiEnvironment;
  token: string;
  /** issuer of the document (`76543210-3`) */
  rutEmisor: string;
  tipoDoc: number;
  folio: number;
}

export interface RegisterAnswer {
  /** 0 done; 1-19 and 20-25 as in the v1.2 document; see REGISTER_COD_RESP */
  codResp: number;
  descResp: string;
}

export interface RegisterEvent {
  codEvento: string;
  descEvento: string;
  /** `rutResponsable-dvResponsable` */
  rutResponsable: string;
  /** as the SII writes it, e.g. `29-09-2026 12:05:36` */
  fechaEvento: string;
}

export interface RegisterHistory extends RegisterAnswer {
  /** with codResp 15 */
  eventos: RegisterEvent[];
}

/** codResp texts of the v1.2 document (27 is LibreDTE's only: UNCONFIRMED). */
export const REGISTER_COD_RESP: Readonly<Record<number, string>> = {
  0: 'action completed OK',
  1: 'wrong issuer RUT',
  2: 'wrong folio',
  3: 'document type not accepted',
  4: 'invalid action',
  5: 'the DTE is already claimed',
  6: 'cannot give receipt of goods for a claimed DTE',
  7: 'event already registered',
  8: 'more than 8 days since reception',
  9: 'no records for these parameters',
  10: 'document not issued or received since 2017-01-14',
  11: 'cannot claim an accepted DTE',
  12: 'cannot accept a claimed DTE',
  13: 'cannot claim after receipt of goods',
  14: 'only the receiving or issuing company may do this',
  15: 'list of events of the document',
  16: 'no claim or receipt events',
  17: 'only the receiving company may do this',
  18: 'document not received',
  19: 'goods claim already made',
  20: 'document type cannot be assigned',
  21: 'not assignable: annulled by a credit note of the issuer within 8 days',
  22: 'no claim or receipt of goods recorded',
  23: 'assignable, no claims',
  24: 'not assignable: claimed by the receiver',
  25: 'assignable: 8 days passed, receipt presumed',
};

export async function ingresarAceptacionReclamoDoc(
  t: SiiTransport,
  q: RegisterDocRef & { accionDoc: AccionDoc },
): Promise<RegisterAnswer> {
  if (!ACCIONES_DOC.includes(q.accionDoc))
    throw new RangeError(`accionDoc must be one of ${ACCIONES_DOC.join(', ')}`);
  const ret = await callRegister(t, q, 'ingresarAceptacionReclamoDoc', [['accionDoc', q.accionDoc]]);
  return readAnswer(ret, 'ingresarAceptacionReclamoDoc');
}

export async function listarEventosHistDoc(t: SiiTransport, q: RegisterDocRef): Promise<RegisterHistory> {
  const operation = 'listarEventosHistDoc';
  const ret = await callRegister(t, q, operation, []);
  const answer = readAnswer(ret, operation);
  const eventos = childElements(ret)
    .filter((e) => localName(e) === 'listaEventosDoc')
    .map((e): RegisterEvent => {
      const rut = childText(e, 'rutResponsable') ?? '';
      const dv = childText(e, 'dvResponsable') ?? '';
      return {
        codEvento: childText(e, 'codEvento') ?? '',
        descEvento: childText(e, 'descEvento') ?? '',
        rutResponsable: rut && dv ? `${rut}-${dv}` : rut,
        fechaEvento: childText(e, 'fechaEvento') ?? '',
      };
    });
  for (const ev of eventos) {
    if (!ev.codEvento)
      throw new SiiError('protocol', `${operation}: an event without codEvento`, { operation });
  }
  return { ...answer, eventos };
}

export async function consultarDocDteCedible(t: SiiTransport, q: RegisterDocRef): Promise<RegisterAnswer> {
  const ret = await callRegister(t, q, 'consultarDocDteCedible', []);
  return readAnswer(ret, 'consultarDocDteCedible');
}

/** The SII's reception date and time of the document, as the SII writes it (`DD-MM-YYYY HH:MM:SS`). */
export async function consultarFechaRecepcionSii(t: SiiTransport, q: RegisterDocRef): Promise<string> {
  const operation = 'consultarFechaRecepcionSii';
  const ret = await callRegister(t, q, operation, []);
  const text = (ret.textContent ?? '').trim();
  if (childElements(ret).length > 0 || text === '') {
    throw new SiiError('protocol', `${operation}: expected a date string in <return>`, {
      operation,
      responseExcerpt: excerpt(text),
    });
  }
  return text;
}

async function callRegister(
  t: SiiTransport,
  q: RegisterDocRef,
  method: string,
  extra: [string, string][],
): Promise<Element> {
  const emisor = splitRut(q.rutEmisor, 'rutEmisor');
  if (Number(emisor.body) < 1000 || emisor.body.length > 8)
    throw new RangeError(`rutEmisor out of the register's range: ${q.rutEmisor}`);
  if (!(REGISTER_TIPOS as readonly number[]).includes(q.tipoDoc)) {
    throw new RangeError(
      `tipoDoc ${q.tipoDoc} is not handled by the register (only ${REGISTER_TIPOS.join(', ')})`,
    );
  }
  if (!Number.isInteger(q.folio) || q.folio <= 0 || q.folio > 9_999_999_999)
    throw new RangeError(`bad folio ${q.folio}`);
  if (!q.token || /[\s;,"\\]/.test(q.token)) throw new RangeError('token is empty or not cookie-safe');
  const envelope = literalEnvelope(method, [
    ['rutEmisor', emisor.body],
    ['dvEmisor', emisor.dv],
    ['tipoDoc', String(q.tipoDoc)],
    ['folio', String(q.folio)],
    ...extra,
  ]);
  const reply = await postSoap(t, endpointsOf(t, q.env).registerUrl, envelope, method, q, {
    Cookie: `TOKEN=${q.token}`,
  });
  return readLiteralReturn(reply, method, method);
}

function readAnswer(ret: Element, operation: string): RegisterAnswer {
  const cod = childText(ret, 'codResp');
  if (cod === undefined || !/^-?\d+$/.test(cod)) {
    throw new SiiError(
      'protocol',
      `${operation}: ${cod === undefined ? 'no codResp' : `non-numeric codResp ${cod}`}`,
      {
        operation,
        responseExcerpt: excerpt(ret.toString()),
      },
    );
  }
  const codResp = Number(cod);
  const descResp = childText(ret, 'descResp') ?? '';
  if (codResp === -1) {
    throw new SiiError('transient', `${operation}: codResp -1 internal error, retry later (${descResp})`, {
      operation,
      siiCode: '-1',
      glosa: descResp,
    });
  }
  return { codResp, descResp };
}
