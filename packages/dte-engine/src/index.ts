/**
 * @dte/engine: DTE validation and totals (./input), SII XML, CAF, TED stamp and XML signatures,
 * test fixtures. No I/O of its own.
 */
export * from './model';
export * from './input';
export { readCertificate, readP12, RUT_OTHER_NAME_OID } from './crypto/certificate';
export type { CertificateInfo, SigningCredential } from './crypto/certificate';
export { checkP12Iterations, P12_MAX_ITERATIONS, P12_MAX_BYTES } from './crypto/p12-limits';
export { readP12OffThread, P12_OPEN_TIMEOUT_MS, P12_OPEN_QUEUE_MAX } from './crypto/p12-thread';
export { SerialWorker } from './worker/serial-worker';
export type { SerialJobOptions, SerialWorkerOptions } from './worker/serial-worker';
export { parseCaf, verifyCafSignature, cafExpiryDate, EXPIRING_CAF_TYPES } from './caf';
export type { Caf } from './caf';
export { signTed, verifyTed } from './ted';
export type { TedVerification } from './ted';
export { stampAndSignDte } from './dte-sign';
export type { StampAndSignOptions } from './dte-sign';
export { buildEnvioDte, MAX_DTE_PER_ENVIO, MAX_TYPES_PER_ENVIO, SII_RUT } from './envio';
export type { EnvioOptions } from './envio';
export { verifyEnvioDte, verifyDte, xmlRootName, cutOutDtes } from './verify';
export { readEnvio } from './envio-read';
export type { ParsedEnvio } from './envio-read';
export { checkTotalsArithmetic } from './totals-check';
export { checkDocumentAmounts, AMOUNT_CODES } from './amount-check';
export { xmlCharset, xmlMediaType } from './xml/decode';
export type { AmountFinding } from './amount-check';
export type { EnvioVerification, EnvioDocumentVerification, EnvioVerifyOptions } from './verify';
export { validateEnvioSchema, schemasDir } from './schema';
export type { SchemaEngine } from './schema';
export { signSeedDocument, verifySeedDocument } from './seed';
export type { SeedVerification } from './seed';
export { documentId, SII_NS } from './xml/dte-xml';
export { createTestSiiKey, createTestCaf, createTestP12 } from './fixtures';
export type { SiiKey, TestCafOptions, TestP12Options } from './fixtures';
export * from './boleta';
export type { EnvioSchema } from './schema';
export {
  BHE_RETENCION_BP,
  BHE_RETENCION_SOURCE,
  bheAnnulmentDeadline,
  bheAnnulmentWindow,
  bheFechaProblem,
  bheRetencionBp,
  computeBheRetencion,
  type BheAmounts,
} from './bhe/retencion';
export { signReferencedElement } from './exchange-sign';
export { el as xmlElement, siiTimestamp } from './xml/text';
