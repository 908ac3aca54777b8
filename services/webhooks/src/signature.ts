import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'Service-Signature';

/** Seconds a receiver should tolerate between `t` and its own clock (spec: 5 minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The signing secret: its text, or an HMAC key object holding its UTF-8 bytes (the same key). */
export type SigningKey = string | crypto.KeyObject;

/** hex HMAC-SHA256 of `<t>.<raw body>` with the subscription secret */
export function signatureV1(secret: SigningKey, t: number, rawBody: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
}

/** The header value `t=<unix_seconds>,v1=<hex>` for a body sent at `nowMs`. */
export function signatureHeader(secret: SigningKey, rawBody: string | Buffer, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${signatureV1(secret, t, rawBody)}`;
}

/**
 * What a receiver does: checks the header against the raw body and the tolerance. Exported
 * for clients and for the service's own tests; the tests also check signatures with openssl.
 */
export function verifySignature(
  secret: SigningKey,
  rawBody: string | Buffer,
  header: string,
  nowMs: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parts = new Map(
    header.split(',').map((p) => {
      const i = p.indexOf('=');
      return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isInteger(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(Math.floor(nowMs / 1000) - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureV1(secret, t, rawBody), 'hex');
  return crypto.timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}

/** A new signing secret: 32 random bytes, shown to the client once. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64url')}`;
}
