/**
 * The only door to @dte/engine. Every cryptographic, XML-signature or schema rule the simulator
 * applies (seed signature, envelope and DTE signatures, TED, CAF FRMA, EnvioDTE schema) is the
 * engine's: there is one place for each rule. This module names what the simulator uses.
 */
export {
  verifyEnvioDte,
  readEnvio,
  validateEnvioSchema,
  verifySeedDocument,
  createTestSiiKey,
  createTestCaf,
  readCertificate,
  computeBheRetencion,
  bheAnnulmentDeadline,
  bheAnnulmentWindow,
  bheFechaProblem,
} from '@dte/engine';
export type { EnvioVerification, ParsedEnvio, SiiKey, CertificateInfo } from '@dte/engine';
