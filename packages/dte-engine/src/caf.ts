import { KeyObject, createPrivateKey, createPublicKey } from 'node:crypto';

import { ServiceError } from '@dte/error-catalog';

import { rsaPublicKeyFromParts, rsaSha1Verify, samePublicKey } from './crypto/keys';
import { normalizeRut } from './crypto/rut';
import { decodeXml, elementText } from './xml/decode';
import { Document } from '@xmldom/xmldom';

import { childText, firstChild, flatSerialize, parseXml } from './xml/dom';

/** A parsed CAF (Código de Autorización de Folios): the folio range and its stamping keys. */
export interface Caf {
  rutEmisor: string;
  razonSocial: string;
  tipoDte: number;
  desde: number;
  hasta: number;
  /** YYYY-MM-DD */
  fechaAutorizacion: string;
  /** the SII key that signed FRMA: 100 certification, 300 production */
  idk: number;
  /** FA + 6 months for the types that expire (PROTOCOL.md §7), else null */
  expiresAt: Date | null;
  rsaPublicKeyPem: string;
  rsaPrivateKeyPem: string;
  /** the <CAF> element exactly as the file has it */
  cafElementXml: string;
}

/** Types whose CAF expires 6 months after its authorization date (LibreDTE's rule; PROTOCOL.md §7). */
export const EXPIRING_CAF_TYPES: readonly number[] = [33, 43, 46, 56, 61];
const CAF_VALID_MONTHS = 6;

function parseError(message: string, cause?: unknown): ServiceError {
  return new ServiceError('caf.parse_error', message, cause === undefined ? {} : { cause });
}

export function parseCaf(xml: string | Buffer, opts: { now?: Date; expectedTipo?: number } = {}): Caf {
  const text = decodeXml(xml);
  let doc: Document;
  try {
    doc = parseXml(text);
  } catch (err) {
    throw parseError('the CAF file is not well-formed XML', err);
  }
  const root = doc.documentElement;
  if (!root) throw parseError('the CAF file is empty');
  const cafEl = root.localName === 'CAF' ? root : firstChild(root, 'CAF');
  const da = cafEl ? firstChild(cafEl, 'DA') : undefined;
  if (!cafEl || !da) throw parseError('the CAF file has no AUTORIZACION/CAF/DA element');

  const req = (value: string | undefined, name: string): string => {
    const v = value?.trim();
    if (!v) throw parseError(`the CAF lacks ${name}`);
    return v;
  };
  const int = (value: string | undefined, name: string): number => {
    const v = req(value, name);
    if (!/^\d{1,10}$/.test(v)) throw parseError(`the CAF's ${name} is not a positive integer: ${v}`);
    return Number(v);
  };

  const rutEmisor = normalizeRut(req(childText(da, 'RE'), 'DA/RE'));
  if (!rutEmisor) throw parseError('the CAF RE is not a RUT');
  const tipoDte = int(childText(da, 'TD'), 'DA/TD');
  const desde = int(childText(da, 'RNG', 'D'), 'DA/RNG/D');
  const hasta = int(childText(da, 'RNG', 'H'), 'DA/RNG/H');
  if (desde < 1 || hasta < desde)
    throw parseError(`the CAF folio range ${desde}-${hasta} is empty or inverted`);
  const fechaAutorizacion = req(childText(da, 'FA'), 'DA/FA');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fechaAutorizacion) || Number.isNaN(Date.parse(fechaAutorizacion))) {
    throw parseError(`the CAF FA is not a date: ${fechaAutorizacion}`);
  }
  const idk = int(childText(da, 'IDK'), 'DA/IDK');
  if (firstChild(da, 'DSAPK') && !firstChild(da, 'RSAPK')) throw parseError('DSA CAFs are not supported');
  const m = req(childText(da, 'RSAPK', 'M'), 'DA/RSAPK/M');
  const e = req(childText(da, 'RSAPK', 'E'), 'DA/RSAPK/E');
  req(childText(cafEl, 'FRMA'), 'CAF/FRMA');
  const rsask = req(childText(root, 'RSASK'), 'RSASK');
  const rsapubk = req(childText(root, 'RSAPUBK'), 'RSAPUBK');

  let privateKey: KeyObject;
  let publicKey: KeyObject;
  let rsapk: KeyObject;
  try {
    privateKey = createPrivateKey(rsask);
    publicKey = createPublicKey(rsapubk);
    rsapk = rsaPublicKeyFromParts(m, e);
  } catch (err) {
    throw parseError('the CAF keys (RSASK, RSAPUBK, RSAPK) are not readable RSA keys', err);
  }
  if (!keysFormPair(privateKey, publicKey)) throw parseError('the CAF RSASK and RSAPUBK are not a key pair');
  if (!samePublicKey(publicKey, rsapk)) throw parseError('the CAF RSAPK differs from RSAPUBK');

  const cafText = elementText(text, 'CAF');
  if (!cafText) throw parseError('the CAF element text cannot be located');

  const caf: Caf = {
    rutEmisor,
    razonSocial: childText(da, 'RS')?.trim() ?? '',
    tipoDte,
    desde,
    hasta,
    fechaAutorizacion,
    idk,
    expiresAt: expiresAtOf(tipoDte, fechaAutorizacion),
    rsaPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    rsaPrivateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    cafElementXml: cafText.text,
  };
  if (!caf.razonSocial) throw parseError('the CAF lacks DA/RS');
  if (opts.expectedTipo !== undefined && opts.expectedTipo !== tipoDte) {
    throw new ServiceError(
      'caf.wrong_tipo',
      `the CAF is for type ${tipoDte}, expected ${opts.expectedTipo}`,
      { detail: { tipoDte, expected: opts.expectedTipo } },
    );
  }
  assertCafNotExpired(caf, opts.now ?? new Date());
  return caf;
}

export function assertCafNotExpired(caf: Caf, now: Date): void {
  if (caf.expiresAt && now.getTime() > caf.expiresAt.getTime()) {
    throw new ServiceError(
      'caf_expired',
      `the CAF for type ${caf.tipoDte} expired on ${caf.expiresAt.toISOString()}`,
      {
        detail: {
          tipoDte: caf.tipoDte,
          expiresAt: caf.expiresAt.toISOString(),
          desde: caf.desde,
          hasta: caf.hasta,
        },
      },
    );
  }
}

/** RSASK and RSAPUBK form a pair when the private key's public half is RSAPUBK. */
function keysFormPair(privateKey: KeyObject, publicKey: KeyObject): boolean {
  return samePublicKey(createPublicKey(privateKey), publicKey);
}

/**
 * FRMA check: SHA1withRSA over the DA element without whitespace between tags and without
 * namespace, as ISO-8859-1 bytes (PROTOCOL.md §7), with the SII's public key for the CAF's IDK
 * (a PEM public key or certificate).
 */
export function verifyCafSignature(caf: Caf, siiPublicKeyPem: string): boolean {
  const { da, frma } = cafParts(caf.cafElementXml);
  let key: KeyObject;
  try {
    key = createPublicKey(siiPublicKeyPem);
  } catch (err) {
    throw new ServiceError(
      'validation_failed',
      'the SII public key is not a readable PEM key or certificate',
      {
        cause: err,
        issues: [{ path: 'siiPublicKeyPem', message: 'not a PEM public key or certificate' }],
      },
    );
  }
  return rsaSha1Verify(Buffer.from(da, 'latin1'), frma, key);
}

/** The flattened DA and the FRMA of a <CAF> element's text. */
export function cafParts(cafElementXml: string): { da: string; frma: string; canonical: string } {
  let doc: Document;
  try {
    doc = parseXml(cafElementXml);
  } catch (err) {
    throw parseError('the CAF element is not well-formed XML', err);
  }
  const root = doc.documentElement;
  const da = root ? firstChild(root, 'DA') : undefined;
  if (!root || !da) throw parseError('the CAF element has no DA');
  return {
    da: flatSerialize(da),
    frma: (childText(root, 'FRMA') ?? '').trim(),
    canonical: flatSerialize(root),
  };
}

/**
 * The one CAF expiry rule: for the types of EXPIRING_CAF_TYPES a CAF stops being usable on the
 * day CAF_VALID_MONTHS calendar months after its authorization date FA (YYYY-MM-DD; a day that
 * does not exist in the target month rolls over, as Date does). Returns that first day on which
 * it is no longer valid, or null for types whose CAF does not expire. A document dated that
 * day or later cannot use the CAF.
 */
export function cafExpiryDate(tipoDte: number, fechaAutorizacion: string): string | null {
  if (!EXPIRING_CAF_TYPES.includes(tipoDte)) return null;
  const [y, m, d] = fechaAutorizacion.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1 + CAF_VALID_MONTHS, d)).toISOString().slice(0, 10);
}

/** The instant the CAF expires: midnight (America/Santiago) of cafExpiryDate. */
function expiresAtOf(tipoDte: number, fechaAutorizacion: string): Date | null {
  const day = cafExpiryDate(tipoDte, fechaAutorizacion);
  if (!day) return null;
  const target = new Date(`${day}T00:00:00Z`);
  // Chile is UTC-3 or UTC-4: find the offset in force at that date
  const probe = new Date(target.getTime() + 12 * 3600 * 1000);
  const offset = santiagoOffsetMinutes(probe);
  return new Date(target.getTime() - offset * 60 * 1000);
}

function santiagoOffsetMinutes(at: Date): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Santiago', timeZoneName: 'longOffset' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name ?? '');
  if (!m) return 0;
  const mins = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === '-' ? -mins : mins;
}
