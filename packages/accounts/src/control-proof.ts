/**
 * Proof of control before a RUT gets an owner (issue 28): the one who onboards a company presents
 * the digital certificate (.p12 and its password) of a person the SII authorizes to act for that
 * RUT, and the SII itself says so. The SII authenticates the certificate's holder (a seed signed
 * with it, GetTokenFromSeed) and then answers the company's purchases register (RCV) only to a user
 * the company enrolled ("usuarios autorizados"); anyone else gets a refusal. This is what the
 * service needs anyway to act for the company at the SII (every upload, folio request, register
 * event goes through the same authorization), so a company that can issue through us has such a
 * person. The certificate is used once for the proof and not stored.
 *
 * Answers: the holder's RUT and the certificate's fingerprint (for the audit log); a certificate
 * that does not open is `cert.invalid`; one the SII does not authorize for the RUT is
 * `cert_subject_mismatch` (detail.motivo `firmante_no_autorizado`); an SII that does not answer
 * is `sii_unavailable` (nothing is created: try again).
 */
import { readP12OffThread, santiagoDate, type SigningCredential } from '@dte/engine';
import { ServiceError } from '@dte/error-catalog';
import { isSiiError, type SiiClient } from '@dte/sii-client';

export interface ControlProof {
  /** the certificate holder's RUT, authorized by the SII for the company */
  firmante: string;
  certificadoSha256: string;
}

/** Checks that the holder of the .p12 acts for `rut` at the SII; see the module comment. */
export type ControlProofSource = (rut: string, p12: Buffer, password: string) => Promise<ControlProof>;

/** Most bytes of a .p12 presented as proof (a personal certificate is 3-10 KB). */
export const PROOF_P12_MAX_BYTES = 64 * 1024;

/** The proof with the SII (or the simulator at SII_BASE_URL) through `client`. */
export function siiControlProof(
  client: SiiClient,
  opts: { timeoutMs: number; now: () => Date },
): ControlProofSource {
  return async (rut, p12, password) => {
    if (p12.length === 0 || p12.length > PROOF_P12_MAX_BYTES) {
      throw new ServiceError('cert.invalid', `the .p12 must hold 1-${PROOF_P12_MAX_BYTES} bytes`, {});
    }
    const credential: SigningCredential = await readP12OffThread(p12, password);
    const firmante = credential.info.rut;
    // the register of the production SII (every taxpayer has one, issuer or not), then the
    // certification SII's (a company enrolled only there so far): authorized in either is enough
    let refusal: unknown;
    for (const env of ['prod', 'cert'] as const) {
      try {
        await client.session(credential).readRcv({
          env,
          rutEmpresa: rut,
          operacion: 'compras',
          periodo: santiagoDate(opts.now()).slice(0, 7),
          timeoutMs: opts.timeoutMs,
        });
        return { firmante, certificadoSha256: credential.info.fingerprintSha256 };
      } catch (err) {
        if (!(isSiiError(err) && (err.kind === 'rejected' || err.kind === 'auth'))) {
          if (isSiiError(err)) {
            throw new ServiceError('sii_unavailable', `El SII no respondió: ${err.message}`, {
              detail: { retryAfterSec: 30 },
            });
          }
          throw err;
        }
        refusal = err;
      }
    }
    throw new ServiceError(
      'cert_subject_mismatch',
      `El SII no reconoce al titular del certificado (${firmante}) como usuario autorizado de la empresa ${rut}.`,
      { detail: { motivo: 'firmante_no_autorizado', rut, firmante }, cause: refusal },
    );
  };
}
