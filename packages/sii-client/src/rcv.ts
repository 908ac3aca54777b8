/**
 * The purchases and sales register (RCV, registro de compras y ventas), read through the JSON
 * services the SII's own web application (www4.sii.cl/consdcvinternetui) calls. No SII document
 * describes them: the format below is what public clients of those services send and read
 * (docs/sii-exchange.md, "RCV": each point with its source, the UNCONFIRMED ones marked).
 *
 *   POST {host}/consdcvinternetui/services/data/facadeService/{getResumen|getDetalleCompra|getDetalleVenta}
 *   Cookie: TOKEN=…            Content-Type: application/json
 *   {"metaData": {"namespace": "cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService/<op>",
 *                 "conversationId": <TOKEN>, "transactionId": <uuid>, "page": null},
 *    "data": {"rutEmisor": "76086428", "dvEmisor": "5", "ptributario": "202611",
 *             "estadoContab": "REGISTRO", "operacion": "COMPRA", "codTipoDoc": 33, …}}
 *   → {"data": [ rows ] | null, "metaData": {…}, "respEstado": {"codRespuesta": 0, "msgeRespuesta": …, "codError": …}}
 *
 * One side of a period is read as the web application reads it: getResumen per state
 * (estadoContab: purchases REGISTRO, PENDIENTE, NO_INCLUIR, RECLAMADO; sales REGISTRO) gives the
 * document types with documents (rsmnTipoDocInteger, rsmnTotDoc), then getDetalleCompra /
 * getDetalleVenta per type gives the rows (det* fields). Each row keeps the state it was listed
 * under (`estado`), so NO_INCLUIR stays NO_INCLUIR.
 *
 * {host} is www4.sii.cl for the real SII (both environments: the RCV has no certification host
 * that a public client documents, UNCONFIRMED), or the configured base URL of a stand-in (the
 * SII simulator serves the same paths and format under its environment root).
 *
 * Answers: HTTP 401, or a web page (the login page) instead of JSON, `auth` (a session renews the
 * token once); 403 and other 4xx `rejected`; 5xx/408/429/network `transient`;
 * respEstado.codRespuesta ≠ 0 `rejected` with the SII's message; any other 200 that is not this
 * JSON `protocol`.
 */
import { randomUUID } from 'node:crypto';
import { santiagoInstant } from '@dte/engine';

import { REAL_SII_ENDPOINTS, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp, type HttpReply } from './http';
import { splitRut } from './rut';
import { endpointsOf, type CallOptions, type SiiTransport } from './transport';
import { decodeBody, excerpt } from './xml';

export type RcvOperacion = 'ventas' | 'compras';

/** The register's states a document is listed under (estadoContab). */
export const RCV_ESTADOS: Record<RcvOperacion, readonly string[]> = {
  compras: ['REGISTRO', 'PENDIENTE', 'NO_INCLUIR', 'RECLAMADO'],
  ventas: ['REGISTRO'],
};

/** The real SII's host of the RCV web application and its services' path and namespace. */
export const REAL_RCV_HOST = 'https://www4.sii.cl';
export const RCV_FACADE_PATH = '/consdcvinternetui/services/data/facadeService';
export const RCV_NAMESPACE = 'cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService';
/** What the web application sends as its (no-op) reCAPTCHA token and action per side. */
export const RCV_RECAPTCHA = { token: 't-o-k-e-n-web', compras: 'RCV_DETC', ventas: 'RCV_DETV' } as const;
/** Types the register shows only as period totals (boletas and the like): no detail to read. */
export const RCV_RESUMEN_ONLY_TIPOS: readonly number[] = [35, 38, 39, 41, 47, 48];

export interface RcvQuery extends CallOptions {
  env: SiiEnvironment;
  token: string;
  rutEmpresa: string;
  operacion: RcvOperacion;
  /** YYYY-MM */
  periodo: string;
}

/** One document as the SII registered it (every field of its register row we keep). */
export interface RcvDocumento {
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  /** the other party's name as the register shows it (detRznSoc) */
  razonSocial: string | null;
  rutReceptor: string;
  fchEmis: string;
  /** ISO-8601 instant of the SII's reception ('' when not given) */
  fechaRecepcion: string;
  mntNeto: number;
  mntExe: number;
  /** recoverable VAT (detMntIVA) */
  iva: number;
  /** non-recoverable VAT (detMntIVANoRec) and its code (detCodIVANoRec, 1-9) */
  ivaNoRecuperable: number;
  codIvaNoRecuperable: number | null;
  /** VAT of common use (detIVAUsoComun) */
  ivaUsoComun: number;
  /** fixed assets: net (detMntActFijo) and VAT (detMntIVAActFijo) */
  mntActivoFijo: number;
  ivaActivoFijo: number;
  /** taxes without credit right (detMntSinCredito) */
  mntSinCredito: number;
  /** other taxes: total (totalDtoiMontoImp), code (detTpoImp) and rate (detTasaImp) */
  otrosImpuestos: { total: number; codigo: number | null; tasa: number | null };
  mntTotal: number;
  /** purchase type (detTipoTransaccion: 1 del giro, 2 supermercado, 3 bien raíz, 4 activo fijo, 5 IVA uso común, 6 sin derecho a crédito, 7 no corresponde incluir) */
  tipoCompra: number | null;
  /** ISO instants of the acceptance (detFecAcuse) and of the claim (detFecReclamado) */
  fechaAcuse: string | null;
  fechaReclamo: string | null;
  /** the state it is listed under: REGISTRO, PENDIENTE, NO_INCLUIR, RECLAMADO */
  estado: string;
  /** the receiver's register event on the document (detEventoReceptor), when there is one */
  eventos: string[];
  /**
   * purchases: the transfer (cesión) the source knows of; null = none known; absent = not said
   * (the SII's rows never say: only the simulator adds it, as its own extension)
   */
  cesion?: RcvCesion | null;
}

export interface RcvCesion {
  rutCesionario: string;
  razonSocialCesionario: string;
  /** YYYY-MM-DD */
  fechaCesion: string;
}

export interface RcvRegistro {
  rutEmpresa: string;
  periodo: string;
  operacion: RcvOperacion;
  documentos: RcvDocumento[];
}

const OPERATION = 'rcv';

type Row = Record<string, unknown>;

/** The facade's URL for `op` in `env`: www4.sii.cl for the real SII, else under the base URL. */
export function rcvFacadeUrl(t: SiiTransport, env: SiiEnvironment, op: string): string {
  const base = endpointsOf(t, env).baseUrl.replace(/\/+$/, '');
  const host = base === REAL_SII_ENDPOINTS[env].baseUrl ? REAL_RCV_HOST : base;
  return `${host}${RCV_FACADE_PATH}/${op}`;
}

export async function readRcv(t: SiiTransport, q: RcvQuery): Promise<RcvRegistro> {
  const rut = splitRut(q.rutEmpresa, 'rutEmpresa');
  if (q.operacion !== 'ventas' && q.operacion !== 'compras')
    throw new RangeError(`operacion must be ventas or compras`);
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(q.periodo)) throw new RangeError(`bad periodo ${q.periodo}`);
  if (!q.token || /[\s;,"\\]/.test(q.token)) throw new RangeError('token is empty or not cookie-safe');
  const operacion = q.operacion === 'compras' ? 'COMPRA' : 'VENTA';
  const common = {
    rutEmisor: rut.body,
    dvEmisor: rut.dv,
    ptributario: q.periodo.replace('-', ''),
    operacion,
  };
  const detalle = q.operacion === 'compras' ? 'getDetalleCompra' : 'getDetalleVenta';
  const documentos: RcvDocumento[] = [];
  for (const estadoContab of RCV_ESTADOS[q.operacion]) {
    const resumen = await callFacade(t, q, 'getResumen', { ...common, estadoContab, busquedaInicial: true });
    for (const r of resumen) {
      const tipo = toInt(r.rsmnTipoDocInteger ?? r.rsmnTipoDoc);
      const total = toInt(r.rsmnTotDoc) ?? 0;
      if (!tipo || total <= 0 || RCV_RESUMEN_ONLY_TIPOS.includes(tipo)) continue;
      const rows = await callFacade(t, q, detalle, {
        ...common,
        estadoContab,
        codTipoDoc: tipo,
        accionRecaptcha: RCV_RECAPTCHA[q.operacion],
        tokenRecaptcha: RCV_RECAPTCHA.token,
      });
      for (const row of rows)
        documentos.push(
          rcvDocumentFromRow(row, {
            operacion: q.operacion,
            estado: estadoContab,
            tipo,
            empresa: `${rut.body}-${rut.dv}`,
          }),
        );
    }
  }
  return { rutEmpresa: `${rut.body}-${rut.dv}`, periodo: q.periodo, operacion: q.operacion, documentos };
}

async function callFacade(t: SiiTransport, q: RcvQuery, op: string, data: Row): Promise<Row[]> {
  const body = {
    metaData: {
      namespace: `${RCV_NAMESPACE}/${op}`,
      conversationId: q.token,
      transactionId: randomUUID(),
      page: null,
    },
    data,
  };
  const reply = await sendHttp({
    url: rcvFacadeUrl(t, q.env, op),
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/plain, */*',
      'User-Agent': t.userAgent,
      Cookie: `TOKEN=${q.token}`,
    },
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    timeoutMs: q.timeoutMs ?? t.timeoutMs,
    ...(q.signal ? { signal: q.signal } : {}),
    operation: `${OPERATION}.${op}`,
  });
  return interpretFacadeReply(reply, op);
}

/** The `data` rows of one facade answer, or the SiiError its status or respEstado says. */
export function interpretFacadeReply(reply: HttpReply, op: string): Row[] {
  const text = decodeBody(reply.body);
  const { status } = reply;
  const operation = `${OPERATION}.${op}`;
  const details = { operation, httpStatus: status, responseExcerpt: excerpt(text) };
  if (status >= 500 || status === 408 || status === 429)
    throw new SiiError('transient', `${operation}: HTTP ${status} from the SII`, details);
  if (status === 401)
    throw new SiiError('auth', `${operation}: the SII refused the token (HTTP 401)`, details);
  if (status >= 400)
    throw new SiiError('rejected', `${operation}: the SII refused the read (HTTP ${status})`, {
      ...details,
      siiCode: status === 403 ? 'sin_permiso' : String(status),
    });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    // a web page instead of JSON: the web application's answer to a session it does not accept
    // (its login page); read as `auth` so a session renews its token once (UNCONFIRMED)
    if (status === 200 && /<html/i.test(text))
      throw new SiiError(
        'auth',
        `${operation}: the SII answered a web page, not JSON (session not accepted)`,
        {
          ...details,
          cause: err,
        },
      );
    throw new SiiError('protocol', `${operation}: HTTP ${status} whose body is not JSON`, {
      ...details,
      cause: err,
    });
  }
  const o = v as {
    data?: unknown;
    respEstado?: { codRespuesta?: unknown; msgeRespuesta?: unknown; codError?: unknown };
  } | null;
  if (status !== 200 || !o || typeof o !== 'object' || Array.isArray(o))
    throw new SiiError('protocol', `${operation}: HTTP ${status} without the facade's answer`, details);
  const code = o.respEstado?.codRespuesta;
  if (code !== undefined && code !== null && Number(code) !== 0)
    throw new SiiError(
      'rejected',
      `${operation}: the SII answered ${String(code)}: ${String(o.respEstado?.msgeRespuesta ?? o.respEstado?.codError ?? '')}`,
      { ...details, siiCode: String(code) },
    );
  if (o.data === null || o.data === undefined) return [];
  if (!Array.isArray(o.data) || o.data.some((r) => !r || typeof r !== 'object'))
    throw new SiiError('protocol', `${operation}: data is not a list of rows`, details);
  return o.data as Row[];
}

/**
 * One det* row as an RcvDocumento. For purchases the row's RUT (detRutDoc-detDvDoc) is the
 * issuer and the company the receiver; for sales the company issued it and the row names the
 * receiver.
 */
export function rcvDocumentFromRow(
  row: Row,
  ctx: { operacion: RcvOperacion; estado: string; tipo: number; empresa: string },
): RcvDocumento {
  const details = { operation: OPERATION, responseExcerpt: excerpt(JSON.stringify(row)) };
  const other = rutOf(row.detRutDoc, row.detDvDoc);
  const folio = toInt(row.detNroDoc);
  const fchEmis = chileDate(row.detFchDoc);
  const tipoDte = toInt(row.detTipoDoc) ?? ctx.tipo;
  if (!other || !folio || !fchEmis)
    throw new SiiError(
      'protocol',
      `${OPERATION}: a row without detRutDoc/detDvDoc, detNroDoc or detFchDoc`,
      details,
    );
  const amount = (k: string) => {
    const v = row[k];
    if (v === null || v === undefined || v === '') return 0;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new SiiError('protocol', `${OPERATION}: ${k} is not a number`, details);
    return Math.trunc(n);
  };
  const evento = typeof row.detEventoReceptor === 'string' ? row.detEventoReceptor.trim() : '';
  const otros = amount('totalDtoiMontoImp');
  const doc: RcvDocumento = {
    tipoDte,
    folio,
    rutEmisor: ctx.operacion === 'compras' ? other : ctx.empresa,
    razonSocial: typeof row.detRznSoc === 'string' ? row.detRznSoc : null,
    rutReceptor: ctx.operacion === 'compras' ? ctx.empresa : other,
    fchEmis,
    fechaRecepcion: chileInstant(row.detFecRecepcion) ?? '',
    mntNeto: amount('detMntNeto'),
    mntExe: amount('detMntExe'),
    iva: amount('detMntIVA'),
    ivaNoRecuperable: amount('detMntIVANoRec'),
    codIvaNoRecuperable: toInt(row.detCodIVANoRec ?? row.detMntCodNoRec) || null,
    ivaUsoComun: amount('detIVAUsoComun'),
    mntActivoFijo: amount('detMntActFijo'),
    ivaActivoFijo: amount('detMntIVAActFijo'),
    mntSinCredito: amount('detMntSinCredito'),
    // detTpoImp is 1 (IVA) on documents without another tax: a code is read only with an amount
    otrosImpuestos: {
      total: otros,
      codigo: otros > 0 ? (toInt(row.detTpoImp) ?? null) : null,
      tasa:
        otros > 0 && row.detTasaImp !== null && row.detTasaImp !== undefined && row.detTasaImp !== ''
          ? Number(row.detTasaImp)
          : null,
    },
    mntTotal: amount('detMntTotal'),
    tipoCompra: ctx.operacion === 'compras' ? (toInt(row.detTipoTransaccion) ?? null) : null,
    fechaAcuse: chileInstant(row.detFecAcuse),
    fechaReclamo: chileInstant(row.detFecReclamado),
    estado: ctx.estado,
    eventos: evento ? [evento] : [],
  };
  const c = row.cesion;
  if (c === null) doc.cesion = null;
  else if (c && typeof c === 'object') {
    const x = c as Record<string, unknown>;
    doc.cesion = {
      rutCesionario: String(x.rutCesionario ?? ''),
      razonSocialCesionario: String(x.razonSocialCesionario ?? ''),
      fechaCesion: String(x.fechaCesion ?? ''),
    };
  }
  return doc;
}

function toInt(v: unknown): number | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
}

function rutOf(body: unknown, dv: unknown): string | null {
  const b = toInt(body);
  const d = typeof dv === 'string' || typeof dv === 'number' ? String(dv).trim().toUpperCase() : '';
  return b && /^[\dK]$/.test(d) ? `${b}-${d}` : null;
}

/** `DD/MM/YYYY` (the register's dates) → `YYYY-MM-DD`; an ISO date is kept. */
function chileDate(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim();
  const m = /^(\d{2})\/(\d{2})\/(\d{4})/.exec(s);
  if (m) return `${m[3]}-${m[2]}-${m[1]}`;
  return /^\d{4}-\d{2}-\d{2}$/.test(s) ? s : null;
}

/** `DD/MM/YYYY HH:MM:SS` in Chile's time (the register's date-times) → ISO instant; null when absent. */
function chileInstant(v: unknown): string | null {
  if (typeof v !== 'string' || !v.trim()) return null;
  const m = /^(\d{2})\/(\d{2})\/(\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(v.trim());
  if (!m) {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  return santiagoInstant(+m[3]!, +m[2]!, +m[1]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)).toISOString();
}
