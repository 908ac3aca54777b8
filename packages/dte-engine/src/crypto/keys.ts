import { KeyObject, X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

import { ServiceError } from '@dte/error-catalog';

import { SigningCredential } from './certificate';

/** What signing needs from a credential, prepared once per credential object. */
export interface SigningMaterial {
  key: KeyObject;
  modulusB64: string;
  exponentB64: string;
  /** the certificate's DER in base64, wrapped at 64 columns */
  certificateB64: string;
}

const materialCache = new WeakMap<SigningCredential, SigningMaterial>();

export function signingMaterial(credential: SigningCredential): SigningMaterial {
  const cached = materialCache.get(credential);
  if (cached) return cached;
  let key: KeyObject;
  let cert: X509Certificate;
  try {
    key = createPrivateKey(credential.privateKeyPem);
    cert = new X509Certificate(credential.certificatePem);
  } catch (err) {
    throw new ServiceError('cert.invalid', 'the signing key or certificate cannot be read', { cause: err });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new ServiceError('cert.invalid', 'the SII signature profile needs an RSA key');
  }
  if (!cert.checkPrivateKey(key)) {
    throw new ServiceError('cert.invalid', 'the private key does not belong to the certificate');
  }
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  const material: SigningMaterial = {
    key,
    modulusB64: Buffer.from(jwk.n as string, 'base64url').toString('base64'),
    exponentB64: Buffer.from(jwk.e as string, 'base64url').toString('base64'),
    certificateB64: wrap64(cert.raw.toString('base64')),
  };
  materialCache.set(credential, material);
  return material;
}

export function wrap64(b64: string): string {
  return b64.replace(/(.{64})(?=.)/g, '$1\n');
}

/**
 * Public keys read from text, by that exact text. A verifier meets the same few keys over and over
 * (one certificate signs every DTE of an envelope, one CAF stamps hundreds of documents, one SII
 * key signs every CAF): importing a key is a large part of a verification's cost, and a KeyObject
 * is immutable, so each text is imported once. Bounded: the oldest entry leaves first.
 */
const MAX_CACHED_KEYS = 256;
const keysFromParts = new Map<string, KeyObject>();
const keysFromPem = new Map<string, KeyObject>();

function remember(cache: Map<string, KeyObject>, text: string, key: KeyObject): KeyObject {
  if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value as string);
  cache.set(text, key);
  return key;
}

/** An RSA public key from the base64 modulus and exponent of an XML key value (RSAPK, RSAKeyValue). */
export function rsaPublicKeyFromParts(modulusB64: string, exponentB64: string): KeyObject {
  const modulus = modulusB64.replace(/\s+/g, '');
  const exponent = exponentB64.replace(/\s+/g, '');
  const text = `${modulus}|${exponent}`;
  const cached = keysFromParts.get(text);
  if (cached) return cached;
  const n = Buffer.from(modulus, 'base64');
  const e = Buffer.from(exponent, 'base64');
  if (n.length === 0 || e.length === 0) throw new Error('empty RSA modulus or exponent');
  const key = createPublicKey({
    key: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') },
    format: 'jwk',
  });
  return remember(keysFromParts, text, key);
}

/** A public key from its PEM text (an SII key, a CAF's RSAPUBK), imported once per text. */
export function publicKeyFromPem(pem: string): KeyObject {
  return keysFromPem.get(pem) ?? remember(keysFromPem, pem, createPublicKey(pem));
}

export function rsaSha1Sign(data: string | Buffer, key: KeyObject): string {
  return sign('sha1', typeof data === 'string' ? Buffer.from(data, 'utf8') : data, key).toString('base64');
}

export function rsaSha1Verify(data: Buffer, signatureB64: string, key: KeyObject): boolean {
  try {
    return verify('sha1', data, key, Buffer.from(signatureB64.replace(/\s+/g, ''), 'base64'));
  } catch {
    return false;
  }
}

const spkiOf = new WeakMap<KeyObject, Buffer>();

/** The key's SubjectPublicKeyInfo DER, exported once per KeyObject (cached keys are compared often). */
function spki(key: KeyObject): Buffer {
  let der = spkiOf.get(key);
  if (!der) {
    der = key.export({ type: 'spki', format: 'der' });
    spkiOf.set(key, der);
  }
  return der;
}

export function samePublicKey(a: KeyObject, b: KeyObject): boolean {
  return a === b || spki(a).equals(spki(b));
}
