/**
 * A client of the simulator that speaks like a real one: SOAP envelopes written by hand with
 * the parameters escaped, multipart uploads with Cookie TOKEN, the register WS with the
 * document/literal body. Replies are read with xmldom (escaped return strings are unescaped by
 * the XML parser, as a SOAP client would).
 */
import { DOMParser } from '@xmldom/xmldom';

export type Env = 'cert' | 'prod';

const SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** the parsed document, or undefined for a body that is not XML (e.g. "Error 500") */
function parse(xml: string) {
  try {
    return new DOMParser({ onError: () => undefined }).parseFromString(xml, 'text/xml');
  } catch {
    return undefined;
  }
}

/** text of the first element with this local name */
export function textOf(xml: string, name: string): string | undefined {
  const doc = parse(xml);
  if (!doc) return undefined;
  const els = doc.getElementsByTagNameNS('*', name);
  return els.length > 0 ? (els[0].textContent ?? '') : undefined;
}

export function allTexts(xml: string, name: string): string[] {
  const doc = parse(xml);
  if (!doc) return [];
  const els = doc.getElementsByTagNameNS('*', name);
  const out: string[] = [];
  for (let i = 0; i < els.length; i++) out.push(els[i].textContent ?? '');
  return out;
}

export interface RpcReply {
  status: number;
  body: string;
  /** the unescaped SII:RESPUESTA inside <method>Return */
  respuesta: string;
}

/** An Axis RPC call: <ns:method><param xsi:type="xsd:string">escaped</param>…</ns:method> */
export async function rpc(
  baseUrl: string,
  service: string,
  method: string,
  params: [string, string][],
): Promise<RpcReply> {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="${SOAP}" ` +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    `<soapenv:Body><ns1:${method} xmlns:ns1="https://maullin.sii.cl/DTEWS/${service}.jws">` +
    params.map(([k, v]) => `<${k} xsi:type="xsd:string">${escapeXml(v)}</${k}>`).join('') +
    `</ns1:${method}></soapenv:Body></soapenv:Envelope>`;
  const res = await fetch(`${baseUrl}/DTEWS/${service}.jws`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', SOAPAction: '' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text, respuesta: textOf(text, `${method}Return`) ?? '' };
}

export async function getSeed(baseUrl: string): Promise<string> {
  const r = await rpc(baseUrl, 'CrSeed', 'getSeed', []);
  const seed = textOf(r.respuesta, 'SEMILLA');
  if (!seed) throw new Error(`no seed in ${r.body}`);
  return seed;
}

export async function getToken(
  baseUrl: string,
  signedSeedXml: string,
): Promise<{ estado: string; token?: string; glosa?: string }> {
  const r = await rpc(baseUrl, 'GetTokenFromSeed', 'getToken', [['pszXml', signedSeedXml]]);
  return {
    estado: textOf(r.respuesta, 'ESTADO') ?? '',
    token: textOf(r.respuesta, 'TOKEN'),
    glosa: textOf(r.respuesta, 'GLOSA'),
  };
}

export interface UploadReply {
  status: string;
  trackId?: string;
  body: string;
  httpStatus: number;
}

export async function upload(
  baseUrl: string,
  opts: { token?: string; sender: string; company: string; file: Buffer; fileName?: string },
): Promise<UploadReply> {
  const [rs, ds] = opts.sender.split('-');
  const [rc, dc] = opts.company.split('-');
  const form = new FormData();
  form.append('rutSender', rs);
  form.append('dvSender', ds);
  form.append('rutCompany', rc);
  form.append('dvCompany', dc);
  form.append('archivo', new Blob([opts.file], { type: 'text/xml' }), opts.fileName ?? 'envio.xml');
  const res = await fetch(`${baseUrl}/cgi_dte/UPL/DTEUpload`, {
    method: 'POST',
    headers: {
      ...(opts.token ? { Cookie: `TOKEN=${opts.token}` } : {}),
      'User-Agent': 'Mozilla/4.0 (compatible; PROG 1.0; dte-service tests)',
    },
    body: form,
  });
  const body = await res.text();
  return {
    status: textOf(body, 'STATUS') ?? '',
    trackId: textOf(body, 'TRACKID'),
    body,
    httpStatus: res.status,
  };
}

export async function estUp(baseUrl: string, company: string, trackId: string, token: string) {
  const [rut, dv] = company.split('-');
  const r = await rpc(baseUrl, 'QueryEstUp', 'getEstUp', [
    ['RutCompania', rut],
    ['DvCompania', dv],
    ['TrackId', trackId],
    ['Token', token],
  ]);
  return {
    estado: textOf(r.respuesta, 'ESTADO') ?? '',
    glosa: textOf(r.respuesta, 'GLOSA') ?? '',
    respuesta: r.respuesta,
    informados: allTexts(r.respuesta, 'INFORMADOS').map(Number),
    aceptados: allTexts(r.respuesta, 'ACEPTADOS').map(Number),
    rechazados: allTexts(r.respuesta, 'RECHAZADOS').map(Number),
    reparos: allTexts(r.respuesta, 'REPAROS').map(Number),
  };
}

export async function estDte(
  baseUrl: string,
  q: {
    consultante: string;
    company: string;
    receptor: string;
    tipo: number;
    folio: number;
    fecha: string;
    monto: number;
    token: string;
  },
) {
  const sp = (r: string) => r.split('-');
  const [y, m, d] = q.fecha.split('-');
  const r = await rpc(baseUrl, 'QueryEstDte', 'getEstDte', [
    ['RutConsultante', sp(q.consultante)[0]],
    ['DvConsultante', sp(q.consultante)[1]],
    ['RutCompania', sp(q.company)[0]],
    ['DvCompania', sp(q.company)[1]],
    ['RutReceptor', sp(q.receptor)[0]],
    ['DvReceptor', sp(q.receptor)[1]],
    ['TipoDte', String(q.tipo)],
    ['FolioDte', String(q.folio)],
    ['FechaEmisionDte', `${d}${m}${y}`],
    ['MontoDte', String(q.monto)],
    ['Token', q.token],
  ]);
  return {
    estado: textOf(r.respuesta, 'ESTADO') ?? '',
    glosaEstado: textOf(r.respuesta, 'GLOSA_ESTADO') ?? '',
    errCode: textOf(r.respuesta, 'ERR_CODE') ?? '',
  };
}

export const REGISTER_PATH = {
  cert: '/WSREGISTRORECLAMODTECERT/registroreclamodteservice',
  prod: '/WSREGISTRORECLAMODTE/registroreclamodteservice',
};

export async function register(
  baseUrl: string,
  env: Env,
  method: string,
  params: [string, string][],
  token?: string,
): Promise<{ status: number; body: string; codResp?: number; descResp?: string; ret?: string }> {
  const body =
    `<soapenv:Envelope xmlns:soapenv="${SOAP}" xmlns:ws="http://ws.registroreclamodte.diii.sdi.sii.cl">` +
    `<soapenv:Header/><soapenv:Body><ws:${method}>` +
    params.map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`).join('') +
    `</ws:${method}></soapenv:Body></soapenv:Envelope>`;
  const res = await fetch(`${baseUrl}${REGISTER_PATH[env]}`, {
    method: 'POST',
    headers: {
      'content-type': 'text/xml; charset=utf-8',
      SOAPAction: '',
      ...(token ? { Cookie: `TOKEN=${token}` } : {}),
    },
    body,
  });
  const text = await res.text();
  const cod = textOf(text, 'codResp');
  return {
    status: res.status,
    body: text,
    codResp: cod === undefined ? undefined : Number(cod),
    descResp: textOf(text, 'descResp'),
    ret: textOf(text, 'return'),
  };
}

export function docParams(emisor: string, tipo: number, folio: number, accion?: string): [string, string][] {
  const [rut, dv] = emisor.split('-');
  const p: [string, string][] = [
    ['rutEmisor', rut],
    ['dvEmisor', dv],
    ['tipoDoc', String(tipo)],
    ['folio', String(folio)],
  ];
  if (accion) p.push(['accionDoc', accion]);
  return p;
}

export async function admin(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
