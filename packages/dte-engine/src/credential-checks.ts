import { ServiceError } from '@dte/error-catalog';

import { SigningCredential } from './crypto/certificate';

/** A certificate signs only inside its validity period (cert_expired carries detail.expiredAt). */
export function assertCredentialValidAt(credential: SigningCredential, at: Date): void {
  const { notBefore, notAfter } = credential.info;
  if (at.getTime() > notAfter.getTime()) {
    throw new ServiceError('cert_expired', `the signing certificate expired on ${notAfter.toISOString()}`, {
      detail: { expiredAt: notAfter.toISOString(), rut: credential.info.rut },
    });
  }
  if (at.getTime() < notBefore.getTime()) {
    throw new ServiceError(
      'cert.invalid',
      `the signing certificate is valid only from ${notBefore.toISOString()}`,
      {
        detail: { notBefore: notBefore.toISOString() },
      },
    );
  }
}
