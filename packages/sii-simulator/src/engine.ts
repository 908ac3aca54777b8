/**
 * The only door to @dte/engine. Every cryptographic or XML-signature rule the simulator applies
 * (seed signature, envelope and DTE signatures, TED, CAF FRMA, schema) is the engine's: there
 * is one place for each rule. This module only names the functions the simulator uses.
 */
// The engine is developed alongside; it is loaded on first use so that the protocol layer
// (routes, SOAP, state machine) works and can be tested before every function exists.

export interface CertificateInfo {
  rut: string;
  subject: string;
  notBefore: Date;
  notAfter: Date;
  fingerprintSha256: string;
  serialNumber: string;
}

export interface EnvioVerification {
  caratula: {
    rutEmisor: string;
    rutEnvia: string;
    rutReceptor: string;
    fchResol: string;
    nroResol: number;
    subTotales: { tipoDte: number; cantidad: number }[] | Record<string, number>;
  };
  envelopeSignature: { valid: boolean; error?: string; certificate?: CertificateInfo };
  documents: {
    id: string;
    tipoDte: number;
    folio: number;
    rutEmisor: string;
    rutReceptor: string;
    fchEmis: string;
    mntTotal: number;
    signatureValid: boolean;
    signatureError?: string;
    tedValid: boolean;
    tedError?: string;
    cafSignatureValid?: boolean;
    caf?: {
      desde: number;
      hasta: number;
      idk: number;
      tipoDte: number;
      rutEmisor: string;
      fechaAutorizacion: string;
    };
  }[];
}

/** The SII key pair as the engine's fixtures create it (passed back to createTestCaf as is). */
export type SiiKey = { idk: number; publicKeyPem: string } & Record<string, unknown>;

interface EngineApi {
  verifyEnvioDte(xml: string, opts: { siiPublicKeys: Record<string, string> }): EnvioVerification;
  validateEnvioSchema(xml: string): Promise<{ valid: boolean; errors: string[] }>;
  verifySeedDocument(xml: string): {
    valid: boolean;
    seed?: string;
    error?: string;
    certificate?: CertificateInfo;
  };
  createTestSiiKey(idk?: number): SiiKey;
  createTestCaf(opts: {
    siiKey: SiiKey;
    rutEmisor: string;
    razonSocial: string;
    tipoDte: number;
    desde: number;
    hasta: number;
    fechaAutorizacion: string;
    keyBits?: number;
  }): string | { xml: string };
}

let loaded: EngineApi | undefined;

function engine(): EngineApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (!loaded) loaded = require('@dte/engine') as EngineApi;
  return loaded;
}

function fn<K extends keyof EngineApi>(name: K): EngineApi[K] {
  const f = engine()[name];
  if (typeof f !== 'function') throw new Error(`@dte/engine does not export ${name} (yet)`);
  return f;
}

export const verifyEnvioDte: EngineApi['verifyEnvioDte'] = (xml, opts) => fn('verifyEnvioDte')(xml, opts);
export const validateEnvioSchema: EngineApi['validateEnvioSchema'] = (xml) => fn('validateEnvioSchema')(xml);
export const verifySeedDocument: EngineApi['verifySeedDocument'] = (xml) => fn('verifySeedDocument')(xml);
export const createTestSiiKey: EngineApi['createTestSiiKey'] = (idk) => fn('createTestSiiKey')(idk);
export function createCafXml(opts: Parameters<EngineApi['createTestCaf']>[0]): string {
  const out = fn('createTestCaf')(opts);
  return typeof out === 'string' ? out : out.xml;
}
