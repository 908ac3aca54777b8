/**
 * Status queries (PROTOCOL.md §4-5): QueryEstUp.getEstUp (an upload, by track id) and
 * QueryEstDte.getEstDte (one document). Both take the token as the SOAP parameter `Token`
 * and answer an escaped SII:RESPUESTA.
 *
 * The client reports the SII's codes as they are (ESTADO, GLOSA, ...); what a code means for a
 * document is decided by @dte/status. Token errors (ESTADO 001/002/003) throw an `auth`
 * SiiError so that `withToken` renews the token; a reply without ESTADO is a protocol error.
 */
import { rpcNamespace, serviceUrl, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import {
  isTokenErrorEstado,
  parseRespuesta,
  requireEstado,
  TOKEN_ERROR_ESTADOS,
  type Respuesta,
} from './respuesta';
import { splitRut } from './rut';
import { readRpcReturn, rpcEnvelope } from './soap';
import { endpointsOf, postSoap, type CallOptions, type SiiTransport } from './transport';
import { excerpt } from './xml';

export interface UploadStatusQuery extends CallOptions {
  env: SiiEnvironment;
  token: string;
  /** the issuing company of the upload */
  rutCompany: string;
  trackId: string;
}

export interface UploadTypeCount {
  tipoDte: number;
  informados: number;
  aceptados: number;
  rechazados: number;
  reparos: number;
}

/**
 * QueryEstUp error ESTADOs (negative) grouped by what a poller can do about them:
 * - `pending`: -11 (the upload is not yet registered; see errCode/sqlCode/srvCode); poll again.
 * - `no_permission`: the user's RUT does not exist, is null or is not authorized (-3, -6, -13),
 *   or its validation failed (-10): fix the enrolment at the SII, then ask again.
 * - `sii_error`: the SII failed to answer (-1, -2, -4, -5, -7, -8, -9, -12, -14); poll again later.
 */
export type UploadStatusProblem = 'pending' | 'no_permission' | 'sii_error';

const ERROR_ESTADOS: Readonly<Record<string, { problem: UploadStatusProblem; text: string }>> = {
  '-1': { problem: 'sii_error', text: 'ESTADO field missing' },
  '-2': { problem: 'sii_error', text: 'error retorno' },
  '-3': { problem: 'no_permission', text: 'user RUT does not exist' },
  '-4': { problem: 'sii_error', text: 'error getting data' },
  '-5': { problem: 'sii_error', text: 'error returning data' },
  '-6': { problem: 'no_permission', text: 'user not authorized' },
  '-7': { problem: 'sii_error', text: 'error returning data' },
  '-8': { problem: 'sii_error', text: 'error returning data' },
  '-9': { problem: 'sii_error', text: 'error returning data' },
  '-10': { problem: 'no_permission', text: 'error validating the user RUT' },
  '-11': { problem: 'pending', text: 'upload not yet registered (see ERR_CODE, SQL_CODE, SRV_CODE)' },
  '-12': { problem: 'sii_error', text: 'query error' },
  '-13': { problem: 'no_permission', text: 'user RUT null' },
  '-14': { problem: 'sii_error', text: 'XML error returning data' },
};

export interface UploadStatus {
  /** ESTADO as the SII wrote it: EPR, RSC, SOK, CRT, FOK, PDR, RFR, RCT, -11, ... */
  estado: string;
  glosa?: string;
  /** e.g. `532 ( 2004/06/14 16:44:20)` or just a number */
  numAtencion?: string;
  /** TRACKID echoed in the header, as text */
  trackId?: string;
  /** with -11: 0 status returned / 1 upload not owned or parameters missing / 2 process error */
  errCode?: string;
  sqlCode?: string;
  srvCode?: string;
  /** set for negative (error) ESTADOs */
  problem?: UploadStatusProblem;
  /** RESP_BODY counts, one entry per TIPO_DOCTO group */
  counts: UploadTypeCount[];
  /** sums over `counts` */
  totals: Omit<UploadTypeCount, 'tipoDte'>;
  raw: string;
}

export async function queryUploadStatus(t: SiiTransport, q: UploadStatusQuery): Promise<UploadStatus> {
  const operation = 'QueryEstUp.getEstUp';
  const company = splitRut(q.rutCompany, 'rutCompany');
  if (!/^\d{1,20}$/.test(q.trackId))
    throw new RangeError(`trackId must be digits: ${JSON.stringify(q.trackId)}`);
  requireToken(q.token);
  const envelope = rpcEnvelope(rpcNamespace(q.env, 'queryEstUp'), 'getEstUp', [
    ['RutCompania', company.body],
    ['DvCompania', company.dv],
    ['TrackId', q.trackId],
    ['Token', q.token],
  ]);
  const url = serviceUrl(endpointsOf(t, q.env), 'queryEstUp');
  const reply = await postSoap(t, url, envelope, operation, q);
  const r = parseRespuesta(readRpcReturn(reply, 'getEstUp', operation), operation);
  const estado = requireEstado(r, operation);
  throwOnTokenError(r, estado, operation);

  const out: UploadStatus = {
    estado,
    counts: readCounts(r, operation),
    totals: { informados: 0, aceptados: 0, rechazados: 0, reparos: 0 },
    raw: r.raw,
  };
  for (const c of out.counts) {
    out.totals.informados += c.informados;
    out.totals.aceptados += c.aceptados;
    out.totals.rechazados += c.rechazados;
    out.totals.reparos += c.reparos;
  }
  const hdr: [keyof UploadStatus, string][] = [
    ['glosa', 'GLOSA'],
    ['numAtencion', 'NUM_ATENCION'],
    ['trackId', 'TRACKID'],
    ['errCode', 'ERR_CODE'],
    ['sqlCode', 'SQL_CODE'],
    ['srvCode', 'SRV_CODE'],
  ];
  for (const [key, tag] of hdr) if (r.hdr[tag]) (out as unknown as Record<string, string>)[key] = r.hdr[tag];
  if (estado.startsWith('-')) out.problem = ERROR_ESTADOS[estado]?.problem ?? 'sii_error';
  return out;
}

/** RESP_BODY of QueryEstUp: a flat, repeated group TIPO_DOCTO, INFORMADOS, ACEPTADOS, RECHAZADOS, REPAROS. */
function readCounts(r: Respuesta, operation: string): UploadTypeCount[] {
  const out: UploadTypeCount[] = [];
  let current: UploadTypeCount | undefined;
  const fields: Record<string, keyof Omit<UploadTypeCount, 'tipoDte'>> = {
    INFORMADOS: 'informados',
    ACEPTADOS: 'aceptados',
    RECHAZADOS: 'rechazados',
    REPAROS: 'reparos',
  };
  for (const [name, value] of r.body) {
    if (name !== 'TIPO_DOCTO' && !(name in fields)) continue;
    if (!/^\d+$/.test(value)) {
      throw new SiiError('protocol', `${operation}: ${name} is not a number (${JSON.stringify(value)})`, {
        operation,
        responseExcerpt: excerpt(r.raw),
      });
    }
    if (name === 'TIPO_DOCTO') {
      current = { tipoDte: Number(value), informados: 0, aceptados: 0, rechazados: 0, reparos: 0 };
      out.push(current);
    } else {
      if (!current) {
        throw new SiiError('protocol', `${operation}: ${name} before any TIPO_DOCTO`, {
          operation,
          responseExcerpt: excerpt(r.raw),
        });
      }
      current[fields[name]!] = Number(value);
    }
  }
  return out;
}

export interface DocumentStatusQuery extends CallOptions {
  env: SiiEnvironment;
  token: string;
  /** the certificate owner asking (RutConsultante) */
  rutConsultante: string;
  /** the issuer (RutCompania) */
  rutCompany: string;
  rutReceptor: string;
  tipoDte: number;
  folio: number;
  /** YYYY-MM-DD; sent as DDMMAAAA */
  fechaEmision: string;
  /** MntTotal, an integer */
  montoTotal: number;
}

export interface DocumentStatus {
  /** DOK, DNK, FAU, FNA, FAN, EMP, TMD, TMC, MMD, MMC, AND, ANC, or an error (-1 ...) */
  estado: string;
  glosaEstado?: string;
  errCode?: string;
  glosaErr?: string;
  numAtencion?: string;
  /** every RESP_HDR and RESP_BODY field, for what the SII adds beyond the documented ones */
  fields: Record<string, string>;
  raw: string;
}

export async function queryDocumentStatus(t: SiiTransport, q: DocumentStatusQuery): Promise<DocumentStatus> {
  const operation = 'QueryEstDte.getEstDte';
  const consultante = splitRut(q.rutConsultante, 'rutConsultante');
  const company = splitRut(q.rutCompany, 'rutCompany');
  const receptor = splitRut(q.rutReceptor, 'rutReceptor');
  if (!Number.isInteger(q.tipoDte) || q.tipoDte <= 0 || q.tipoDte > 999)
    throw new RangeError(`bad tipoDte ${q.tipoDte}`);
  if (!Number.isInteger(q.folio) || q.folio <= 0 || q.folio > 9_999_999_999)
    throw new RangeError(`bad folio ${q.folio}`);
  if (!Number.isSafeInteger(q.montoTotal) || q.montoTotal < 0)
    throw new RangeError(`bad montoTotal ${q.montoTotal}`);
  requireToken(q.token);
  const envelope = rpcEnvelope(rpcNamespace(q.env, 'queryEstDte'), 'getEstDte', [
    ['RutConsultante', consultante.body],
    ['DvConsultante', consultante.dv],
    ['RutCompania', company.body],
    ['DvCompania', company.dv],
    ['RutReceptor', receptor.body],
    ['DvReceptor', receptor.dv],
    ['TipoDte', String(q.tipoDte)],
    ['FolioDte', String(q.folio)],
    ['FechaEmisionDte', toDdMmAaaa(q.fechaEmision)],
    ['MontoDte', String(q.montoTotal)],
    ['Token', q.token],
  ]);
  const url = serviceUrl(endpointsOf(t, q.env), 'queryEstDte');
  const reply = await postSoap(t, url, envelope, operation, q);
  const r = parseRespuesta(readRpcReturn(reply, 'getEstDte', operation), operation);
  const estado = requireEstado(r, operation);
  throwOnTokenError(r, estado, operation);
  const fields: Record<string, string> = { ...Object.fromEntries(r.body), ...r.hdr };
  const out: DocumentStatus = { estado, fields, raw: r.raw };
  const named: [keyof DocumentStatus, string][] = [
    ['glosaEstado', 'GLOSA_ESTADO'],
    ['errCode', 'ERR_CODE'],
    ['glosaErr', 'GLOSA_ERR'],
    ['numAtencion', 'NUM_ATENCION'],
  ];
  for (const [key, tag] of named)
    if (fields[tag]) (out as unknown as Record<string, string>)[key] = fields[tag];
  return out;
}

/** `2026-11-22` → `22112026`; anything but a real calendar date is refused. */
export function toDdMmAaaa(isoDate: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!m || !d || d.toISOString().slice(0, 10) !== isoDate) {
    throw new RangeError(`fechaEmision must be a date YYYY-MM-DD: ${JSON.stringify(isoDate)}`);
  }
  return `${m[3]}${m[2]}${m[1]}`;
}

function requireToken(token: string): void {
  if (!token || /[\s<>&]/.test(token)) throw new RangeError('token is empty or malformed');
}

/** 001/002/003 in ESTADO (or in ERR_CODE, as some replies carry it) → auth SiiError. */
function throwOnTokenError(r: Respuesta, estado: string, operation: string): void {
  const code = isTokenErrorEstado(estado)
    ? estado
    : r.hdr.ERR_CODE && isTokenErrorEstado(r.hdr.ERR_CODE)
      ? r.hdr.ERR_CODE
      : undefined;
  if (code === undefined) return;
  const glosa = r.hdr.GLOSA ?? r.hdr.GLOSA_ERR ?? r.hdr.GLOSA_ESTADO;
  throw new SiiError('auth', `${operation}: token refused (${code} ${TOKEN_ERROR_ESTADOS[code]})`, {
    operation,
    siiCode: code,
    ...(glosa ? { glosa } : {}),
  });
}
