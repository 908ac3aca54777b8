/**
 * SOAP 1.1 as the SII speaks it.
 *
 * - DTEWS (CrSeed, GetTokenFromSeed, QueryEstUp, QueryEstDte): Apache Axis JWS, RPC style, empty
 *   SOAPAction. The request body is `<m:<method> xmlns:m="<real endpoint URL>">` with one
 *   `xsi:type="xsd:string"` child per WSDL part, in WSDL order (the manual's own sample). The reply
 *   `<ns1:<method>Response><<method>Return>` is a string holding an escaped `SII:RESPUESTA`.
 * - The acceptance/claim register: document/literal, namespace
 *   `http://ws.registroreclamodte.diii.sdi.sii.cl`, children without a namespace; the reply is
 *   `<ns2:<method>Response><return>…</return>`.
 *
 * Reading a reply: HTML, the bare "Error 500" text and HTTP 5xx without a SOAP Fault are
 * transient; a Fault is classified by its code and text; anything else unexpected is a protocol
 * error.
 */
import type { Element } from '@xmldom/xmldom';

import { SiiError } from './errors';
import type { HttpReply } from './http';
import {
  childElements,
  childText,
  decodeBody,
  escapeXml,
  excerpt,
  findChild,
  localName,
  looksLikeHtml,
  parseXml,
  XmlError,
} from './xml';

export const SOAP_ENV_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const REGISTER_NS = 'http://ws.registroreclamodte.diii.sdi.sii.cl';

/** RPC request; `params` in WSDL order, every value sent as xsd:string. */
export function rpcEnvelope(namespace: string, method: string, params: [string, string][]): string {
  const parts = params.map(([name, value]) => `<${name} xsi:type="xsd:string">${escapeXml(value)}</${name}>`);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV_NS}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    '<soapenv:Body>' +
    `<m:${method} xmlns:m="${escapeXml(namespace)}">${parts.join('')}</m:${method}>` +
    '</soapenv:Body></soapenv:Envelope>'
  );
}

/** Document/literal request of the register WS. */
export function literalEnvelope(method: string, params: [string, string][]): string {
  const parts = params.map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV_NS}" xmlns:ws="${REGISTER_NS}">` +
    '<soapenv:Header/><soapenv:Body>' +
    `<ws:${method}>${parts.join('')}</ws:${method}>` +
    '</soapenv:Body></soapenv:Envelope>'
  );
}

/** Text of `<method>Return` of an RPC reply (the escaped SII:RESPUESTA, unescaped). */
export function readRpcReturn(reply: HttpReply, method: string, operation: string): string {
  const response = readSoapBody(reply, operation);
  const wrapper = childElements(response)[0];
  if (!wrapper || localName(wrapper) !== `${method}Response`) {
    throw protocol(operation, `expected ${method}Response in the SOAP Body`, reply);
  }
  const ret = childElements(wrapper)[0];
  if (!ret) throw protocol(operation, `${method}Response carries no return value`, reply);
  return ret.textContent ?? '';
}

/** The `<return>` element of a register WS reply. */
export function readLiteralReturn(reply: HttpReply, method: string, operation: string): Element {
  const body = readSoapBody(reply, operation);
  const wrapper = childElements(body)[0];
  if (!wrapper || localName(wrapper) !== `${method}Response`) {
    throw protocol(operation, `expected ${method}Response in the SOAP Body`, reply);
  }
  const ret = findChild(wrapper, 'return');
  if (!ret) throw protocol(operation, `${method}Response carries no <return>`, reply);
  return ret;
}

/** The SOAP Body element; a Fault, an HTML page, "Error 500" or a 5xx become SiiErrors. */
export function readSoapBody(reply: HttpReply, operation: string): Element {
  const text = decodeBody(reply.body);
  rejectNonXmlReply(reply, text, operation);
  let envelope: Element;
  try {
    envelope = parseXml(text).documentElement!;
  } catch (err) {
    if (reply.status >= 500) throw transientHttp(operation, reply, text);
    throw new SiiError(
      'protocol',
      `${operation}: the reply is not well-formed XML (${(err as XmlError).message})`,
      {
        operation,
        httpStatus: reply.status,
        responseExcerpt: excerpt(text),
        cause: err,
      },
    );
  }
  if (localName(envelope) !== 'Envelope' || envelope.namespaceURI !== SOAP_ENV_NS) {
    if (reply.status >= 500) throw transientHttp(operation, reply, text);
    throw protocol(
      operation,
      `the reply is not a SOAP 1.1 Envelope (root ${envelope.nodeName})`,
      reply,
      text,
    );
  }
  const body = findChild(envelope, 'Body');
  if (!body) throw protocol(operation, 'the SOAP Envelope has no Body', reply, text);
  const fault = findChild(body, 'Fault');
  if (fault) throw faultError(fault, reply, operation);
  if (reply.status < 200 || reply.status >= 300) {
    if (reply.status >= 500) throw transientHttp(operation, reply, text);
    throw protocol(operation, `HTTP ${reply.status} with a SOAP reply that is not a Fault`, reply, text);
  }
  return body;
}

/**
 * HTML pages, the bare "Error 500" text and empty 5xx answers mean the SII (or a proxy in
 * front of it) is in trouble: transient. Other non-XML text is a protocol error.
 */
export function rejectNonXmlReply(reply: HttpReply, text: string, operation: string): void {
  const trimmed = text.trim();
  if (/^Error\s*500\b/i.test(trimmed)) {
    throw new SiiError('transient', `${operation}: the SII answered "${excerpt(trimmed, 60)}"`, {
      operation,
      httpStatus: reply.status,
      responseExcerpt: excerpt(trimmed),
    });
  }
  if (looksLikeHtml(trimmed)) {
    throw new SiiError('transient', `${operation}: the SII answered an HTML page (HTTP ${reply.status})`, {
      operation,
      httpStatus: reply.status,
      responseExcerpt: excerpt(trimmed),
    });
  }
  if (trimmed === '' || !trimmed.startsWith('<')) {
    if (reply.status >= 500 || reply.status === 408 || reply.status === 429)
      throw transientHttp(operation, reply, text);
    throw protocol(
      operation,
      trimmed === '' ? `empty reply (HTTP ${reply.status})` : `the reply is not XML (HTTP ${reply.status})`,
      reply,
      text,
    );
  }
}

export function transientHttp(operation: string, reply: HttpReply, text: string): SiiError {
  return new SiiError('transient', `${operation}: HTTP ${reply.status} from the SII`, {
    operation,
    httpStatus: reply.status,
    responseExcerpt: excerpt(text),
  });
}

export function protocol(operation: string, message: string, reply: HttpReply, text?: string): SiiError {
  return new SiiError('protocol', `${operation}: ${message}`, {
    operation,
    httpStatus: reply.status,
    responseExcerpt: excerpt(text ?? decodeBody(reply.body)),
  });
}

/**
 * SOAP Faults: the register WS's "Error de Autenticacion: TOKEN invalido" (and any fault about
 * the token or authentication) is `auth`; a `Client` fault is our request's fault (`protocol`,
 * not retryable); anything else (`Server`, Axis internals) is `transient`.
 */
function faultError(fault: Element, reply: HttpReply, operation: string): SiiError {
  const code = childText(fault, 'faultcode') ?? '';
  const text = childText(fault, 'faultstring') ?? '';
  const common = { operation, httpStatus: reply.status, siiCode: code, glosa: text };
  if (/token|autentica/i.test(text)) {
    return new SiiError('auth', `${operation}: the SII refused the token (${text})`, common);
  }
  if (/(^|:)Client(\.|$)/.test(code)) {
    return new SiiError('protocol', `${operation}: SOAP Fault ${code}: ${text}`, common);
  }
  return new SiiError('transient', `${operation}: SOAP Fault ${code}: ${text}`, common);
}
