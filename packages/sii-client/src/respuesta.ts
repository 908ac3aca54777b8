/**
 * `SII:RESPUESTA`, the document the DTEWS services return inside their string return value:
 * `SII:RESP_HDR` (ESTADO, GLOSA, ...) and `SII:RESP_BODY` (SEMILLA, TOKEN, per-type counts...), in
 * either order.
 */
import type { Element } from '@xmldom/xmldom';

import { SiiError } from './errors';
import { childElements, excerpt, findDescendant, localName, parseXml, XmlError } from './xml';

export interface Respuesta {
  /** direct children of RESP_HDR by local name (the first one wins when repeated) */
  hdr: Record<string, string>;
  /** direct children of RESP_BODY in document order (QueryEstUp repeats groups) */
  body: [string, string][];
  /** the unescaped RESPUESTA text */
  raw: string;
}

export function parseRespuesta(text: string, operation: string): Respuesta {
  let root: Element;
  try {
    root = parseXml(text.trim()).documentElement!;
  } catch (err) {
    throw new SiiError(
      'protocol',
      `${operation}: the returned SII:RESPUESTA is not well-formed XML (${(err as XmlError).message})`,
      { operation, responseExcerpt: excerpt(text), cause: err },
    );
  }
  if (localName(root) !== 'RESPUESTA') {
    throw new SiiError('protocol', `${operation}: expected SII:RESPUESTA, got ${root.nodeName}`, {
      operation,
      responseExcerpt: excerpt(text),
    });
  }
  const hdrEl =
    childElements(root).find((e) => localName(e) === 'RESP_HDR') ?? findDescendant(root, 'RESP_HDR');
  const bodyEl =
    childElements(root).find((e) => localName(e) === 'RESP_BODY') ?? findDescendant(root, 'RESP_BODY');
  const hdr: Record<string, string> = {};
  for (const e of hdrEl ? childElements(hdrEl) : []) {
    const name = localName(e);
    if (!(name in hdr)) hdr[name] = (e.textContent ?? '').trim();
  }
  const body: [string, string][] = (bodyEl ? childElements(bodyEl) : []).map((e) => [
    localName(e),
    (e.textContent ?? '').trim(),
  ]);
  return { hdr, body, raw: text };
}

/** The ESTADO of the header; a RESPUESTA without one is a protocol error (never read as OK). */
export function requireEstado(r: Respuesta, operation: string): string {
  const estado = r.hdr.ESTADO;
  if (estado === undefined || estado === '') {
    throw new SiiError('protocol', `${operation}: the SII:RESPUESTA carries no ESTADO`, {
      operation,
      responseExcerpt: excerpt(r.raw),
    });
  }
  return estado;
}

export function bodyValue(r: Respuesta, name: string): string | undefined {
  return r.body.find(([k]) => k === name)?.[1];
}

/** Token errors of the status services: 001 cookie/token inactive, 002 token inactive, 003 no such token. */
export const TOKEN_ERROR_ESTADOS: Readonly<Record<string, string>> = {
  '001': 'cookie or token inactive',
  '002': 'token inactive',
  '003': 'token does not exist',
};

export function isTokenErrorEstado(estado: string): boolean {
  return estado in TOKEN_ERROR_ESTADOS;
}
