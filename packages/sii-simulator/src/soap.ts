/**
 * SOAP 1.1 as the SII speaks it.
 *
 * - DTEWS services (CrSeed, GetTokenFromSeed, QueryEstUp, QueryEstDte) are Apache Axis JWS, RPC
 *   style: the body's first element names the method, its children are the parameters (matched
 *   by name, and by position when a client uses other names), and the reply is
 *   `<ns1:<method>Response><<method>Return xsi:type="xsd:string">` holding the SII:RESPUESTA
 *   document as *escaped text*. The RPC namespace is the real endpoint URL (e.g.
 *   `https://maullin.sii.cl/DTEWS/CrSeed.jws`), as in the SII's authentication manual.
 * - The acceptance/claim register is document/literal with the namespace
 *   `http://ws.registroreclamodte.diii.sdi.sii.cl` and a `<return>` element of plain elements.
 */
import type { Element } from '@xmldom/xmldom';
import { childElements, escapeXml, findDescendant, parseXml, XmlParseError } from './xml';

export const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
export const REGISTER_NS = 'http://ws.registroreclamodte.diii.sdi.sii.cl';

export interface SoapCall {
  method: string;
  /** parameters by element local name */
  params: Record<string, string>;
  /** parameters in document order */
  ordered: string[];
}

export class SoapRequestError extends Error {}

export function parseSoapCall(body: string): SoapCall {
  let doc;
  try {
    doc = parseXml(body);
  } catch (err) {
    throw new SoapRequestError(err instanceof XmlParseError ? `malformed XML: ${err.message}` : String(err));
  }
  const envelope = doc.documentElement!;
  if (envelope.localName !== 'Envelope' || envelope.namespaceURI !== SOAP_ENV)
    throw new SoapRequestError('not a SOAP 1.1 Envelope');
  const soapBody = childElements(envelope).find((e) => e.localName === 'Body');
  if (!soapBody) throw new SoapRequestError('no SOAP Body');
  const call = childElements(soapBody)[0] as Element | undefined;
  if (!call) throw new SoapRequestError('empty SOAP Body');
  const params: Record<string, string> = {};
  const ordered: string[] = [];
  for (const p of childElements(call)) {
    const value = p.textContent ?? '';
    params[p.localName ?? p.nodeName] = value;
    ordered.push(value);
  }
  return { method: call.localName ?? call.nodeName, params, ordered };
}

/** A parameter by its WSDL name, or by its WSDL position when the client named it otherwise. */
export function rpcParam(call: SoapCall, names: readonly string[], name: string): string | undefined {
  if (name in call.params) return call.params[name];
  const idx = names.indexOf(name);
  return idx >= 0 && idx < call.ordered.length ? call.ordered[idx] : undefined;
}

export function rpcResponse(namespace: string, method: string, returnXml: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    `<ns1:${method}Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="${namespace}">` +
    `<${method}Return xsi:type="xsd:string">${escapeXml(returnXml)}</${method}Return>` +
    `</ns1:${method}Response></soapenv:Body></soapenv:Envelope>`
  );
}

export function soapFault(faultcode: string, faultstring: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}"><soapenv:Body><soapenv:Fault>` +
    `<faultcode>${escapeXml(faultcode)}</faultcode><faultstring>${escapeXml(faultstring)}</faultstring>` +
    '</soapenv:Fault></soapenv:Body></soapenv:Envelope>'
  );
}

/** Document/literal reply of the register WS; `inner` is already-serialized XML. */
export function literalResponse(method: string, inner: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<S:Envelope xmlns:S="${SOAP_ENV}"><S:Body>` +
    `<ns2:${method}Response xmlns:ns2="${REGISTER_NS}">${inner}</ns2:${method}Response>` +
    '</S:Body></S:Envelope>'
  );
}

/** `<SII:RESPUESTA>` with the given header and body children (already serialized). */
export function siiRespuesta(hdr: string, body?: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">' +
    `<SII:RESP_HDR>${hdr}</SII:RESP_HDR>` +
    (body === undefined ? '' : `<SII:RESP_BODY>${body}</SII:RESP_BODY>`) +
    '</SII:RESPUESTA>'
  );
}

/** `<NAME>text</NAME>` for each pair, text escaped. */
export function elements(pairs: [string, string | number][]): string {
  return pairs.map(([k, v]) => `<${k}>${escapeXml(String(v))}</${k}>`).join('');
}

export { findDescendant };
