import type { SigningCredential } from '@dte/engine';
import type { SiiEnv } from '@dte/tenancy';

export interface FolioGrantRequest {
  environment: SiiEnv;
  rutEmisor: string;
  tipoDte: number;
  cantidad: number;
  /** the certificate that authenticates the request at the SII (decrypted, in memory only) */
  credential: SigningCredential;
}

/**
 * Why a grant did not come back:
 * - unavailable: the SII did not answer usably (network, timeout, 5xx, unreadable reply) → caf.request_failed
 * - rejected: the SII refused the grant (quota, type, state of the taxpayer) → caf.grant_rejected
 * - cert_not_authorized: the certificate's holder may not stamp for the company → caf.cert_not_authorized
 */
export class FolioGrantError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'rejected' | 'cert_not_authorized',
    message: string,
    readonly siiDetail?: Record<string, unknown>,
    /**
     * true when the folio request itself left but no answer came back (timeout, dropped
     * connection): the SII may have granted a range we never saw, so asking again at once could
     * burn a second range.
     */
    readonly outcomeUnknown = false,
  ) {
    super(message);
    this.name = 'FolioGrantError';
  }
}

/** The SII's folio grant (timbraje electrónico): a request answered with a CAF XML. */
export interface FolioGrantClient {
  requestFolios(req: FolioGrantRequest): Promise<{ cafXml: string }>;
}
