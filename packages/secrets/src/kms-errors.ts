import { ApiError } from '@dte/error-catalog';
import { KmsAuthError, KmsUnavailableError } from './envelope';

/**
 * Maps envelope-encryption failures to the catalog: an unavailable master key is
 * cert.kms_unavailable / caf.kms_unavailable (503, retry), a value that does not authenticate is
 * cert.kms.auth_failed (422). Anything else is rethrown as is.
 */
export function mapKmsError(err: unknown, subject: 'cert' | 'caf'): unknown {
  if (err instanceof KmsUnavailableError) {
    return new ApiError(`${subject}.kms_unavailable`, 'The key service is unavailable; retry with backoff.', {
      cause: err,
    });
  }
  if (err instanceof KmsAuthError) {
    if (subject === 'cert') {
      return new ApiError(
        'cert.kms.auth_failed',
        'The stored certificate cannot be decrypted; upload it again.',
        {
          cause: err,
        },
      );
    }
    // no caf.kms.auth_failed in the catalog: a CAF key that does not open is a server fault
    return new Error(`CAF private key does not authenticate: ${err.message}`);
  }
  return err;
}
