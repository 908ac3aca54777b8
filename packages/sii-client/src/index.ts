/**
 * @dte/sii-client: the SII's web services for the services of this repository. Use
 * `new SiiClient(options)` and, to call on behalf of a certificate with tokens handled,
 * `client.session(credential)`. Configuration from the environment: `siiClientEnvSpec`,
 * `siiClientOptions`, `siiClientOptionsFromEnv`; a SII worker's other variables: `siiWorkerEnvSpec`.
 */
export { SiiClient, SiiSession } from './client';
export type { GetTokenOptions, SendEnvioInput, SiiClientOptions, WithTokenOptions } from './client';
export { DEFAULT_TOKEN_TTL_SECONDS, InMemoryTokenCache, tokenCacheKey } from './auth';
export { RedisTokenCache } from './redis-token-cache';
export type { SeedSigner, TokenCache } from './auth';
export * from './config';
export * from './worker-config';
export {
  REAL_SII_ENDPOINTS,
  SII_ENVIRONMENTS,
  SII_PATHS,
  resolveEndpoints,
  simulatorEndpoints,
} from './endpoints';
export type {
  SiiEndpointOverrides,
  SiiEndpoints,
  SiiEnvironment,
  SiiEnvironmentEndpoints,
} from './endpoints';
export * from './errors';
export { FOLIOS_PATH, interpretFolioReply } from './folios';
export type { FolioRequest } from './folios';
export { interpretUploadReply, parseRecepcionDte } from './upload';
export type { RecepcionDte, UploadEnvioInput, UploadOutcome } from './upload';
export { toDdMmAaaa } from './status';
export type {
  DocumentStatus,
  DocumentStatusQuery,
  UploadStatus,
  UploadStatusProblem,
  UploadStatusQuery,
  UploadTypeCount,
} from './status';
export {
  interpretFacadeReply,
  rcvDocumentFromRow,
  rcvFacadeUrl,
  RCV_ESTADOS,
  RCV_FACADE_PATH,
  RCV_NAMESPACE,
  RCV_RECAPTCHA,
  REAL_RCV_HOST,
} from './rcv';
export type { RcvCesion, RcvDocumento, RcvOperacion, RcvQuery, RcvRegistro } from './rcv';
export { ACCIONES_DOC, REGISTER_COD_RESP, REGISTER_TIPOS } from './register';
export type { AccionDoc, RegisterAnswer, RegisterDocRef, RegisterEvent, RegisterHistory } from './register';
export { DEFAULT_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS, DEFAULT_USER_AGENT } from './transport';
export type { CallOptions, SiiTransport } from './transport';
export type { HttpReply } from './http';
export { consultarSituacionTributaria, SituacionError } from './situacion';
export type { SituacionEstado, SituacionTributaria } from './situacion';
export {
  BoletaRestClient,
  REAL_BOLETA_REST_ENDPOINTS,
  boletaRestClientFor,
  boletaSimulatorEndpoints,
} from './boleta-rest';
export type {
  BoletaEnvioReceipt,
  BoletaEnvioStatus,
  BoletaSiiError,
  BoletaRestEndpoints,
  BoletaRestOptions,
} from './boleta-rest';
export { anularBhe, consultarBhe, emitirBhe } from './bhe';
export type { BheEmision, BheSii } from './bhe';
