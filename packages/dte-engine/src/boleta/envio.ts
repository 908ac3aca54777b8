import type { SigningCredential } from '../crypto/certificate';
import { buildSignedEnvelope, type EnvelopeKind } from '../envio';

/** EnvioBOLETA_v11.xsd: at most 500 DTE per SetDTE and 2 SubTotDTE (39 and 41). */
export const MAX_BOLETAS_PER_ENVIO = 500;

export interface EnvioBoletaOptions {
  rutEmisor: string;
  rutEnvia: string;
  fchResol: string;
  nroResol: number;
  credential: SigningCredential;
  timestamp: Date;
  setId?: string;
}

export const ENVIO_BOLETA: EnvelopeKind = {
  root: 'EnvioBOLETA',
  noun: 'boleta',
  nouns: 'boletas',
  maxDocuments: MAX_BOLETAS_PER_ENVIO,
  maxTypes: 2,
  tipos: [39, 41],
  intercambio: false,
};

/**
 * The EnvioBOLETA as ISO-8859-1 bytes, built as an EnvioDTE is (Carátula, the signed boletas
 * inserted unchanged, the SetDTE signed in place, no xmlns:xsi on the root) with the boleta
 * envelope's own bounds: 1-500 boletas of types 39/41 only, one issuer, sent to the SII.
 */
export function buildEnvioBoleta(signedBoletas: string[], opts: EnvioBoletaOptions): Buffer {
  return buildSignedEnvelope(ENVIO_BOLETA, signedBoletas, opts);
}
