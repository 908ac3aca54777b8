/** Records the simulator keeps, per SII environment (certification and production never share state). */

export type SiiEnv = 'cert' | 'prod';
export const SII_ENVS: readonly SiiEnv[] = ['cert', 'prod'];

/** The real hosts each environment stands in for (used as the RPC namespace, as the SII does). */
export const REAL_HOST: Record<SiiEnv, string> = { cert: 'maullin.sii.cl', prod: 'palena.sii.cl' };
/** IDK of the SII key that signs CAFs in each environment */
export const SII_IDK: Record<SiiEnv, number> = { cert: 100, prod: 300 };
/** The register WS paths (ws2 for certification, ws1 for production) */
export const REGISTER_PATH: Record<SiiEnv, string> = {
  cert: '/WSREGISTRORECLAMODTECERT/registroreclamodteservice',
  prod: '/WSREGISTRORECLAMODTE/registroreclamodteservice',
};
/** The SII's own RUT: the Carátula's RutReceptor of an envelope sent to the SII */
export const SII_RUT = '60803000-K';

export interface Company {
  rut: string;
  razonSocial: string;
  /** resolution the Carátula must carry in this environment (certification: NroResol 0) */
  fchResol: string;
  nroResol: number;
  /** RUTs of the certificate owners allowed to act for the company */
  senders: Set<string>;
}

export interface SeedRecord {
  seed: string;
  issuedAt: number;
  usedAt?: number;
}

export interface TokenRecord {
  token: string;
  rut: string;
  issuedAt: number;
  expiresAt: number;
  certificateSubject?: string;
}

/** RCO, RPT, VOF: final rejections of a whole send that the boleta REST status names (docs/boletas-bhe.md) */
export type EnvelopeVerdict = 'EPR' | 'RSC' | 'RFR' | 'RCT' | 'RCO' | 'RPT' | 'VOF';
export type DocumentResult = 'ACEPTADO' | 'REPARO' | 'RECHAZADO';

export interface RegisterEvent {
  codEvento: string;
  descEvento: string;
  rutResponsable: string;
  at: number;
}

export interface DocumentRecord {
  env: SiiEnv;
  trackId: string;
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  rutReceptor: string;
  /** YYYY-MM-DD */
  fchEmis: string;
  mntTotal: number;
  mntNeto?: number;
  mntExe?: number;
  iva?: number;
  result: DocumentResult;
  /** why it was rejected or got reparos (empty when accepted clean) */
  detail: string[];
  /** the same in the SII's shape: the boleta REST status's `error[]` (absent in older state files) */
  errors?: SiiFinding[];
  /** SII reception time (epoch ms): the start of the 8-day register window */
  receivedAt: number;
  events: RegisterEvent[];
}

/**
 * One finding as the SII reports it per document (boleta REST `detalle_rep_rech[].error[]`):
 * section (DET a line, HED the header totals, DTE the document's other checks), line, level (1-2
 * reparo, 3 rejection), code, description, detail. The amount codes are @dte/engine's
 * AMOUNT_CODES; the `DTE` codes (1 rejection, 2 reparo) are this simulator's, UNCONFIRMED.
 */
export interface SiiFinding {
  seccion: 'DET' | 'HED' | 'DTE';
  linea: number;
  nivel: 1 | 2 | 3;
  codigo: number;
  descripcion: string;
  detalle: string;
}

export interface UploadRecord {
  env: SiiEnv;
  trackId: string;
  rutSender: string;
  rutCompany: string;
  fileName: string;
  sha256: string;
  receivedAt: number;
  verdict: EnvelopeVerdict;
  /** the reasons of an RSC/RFR/RCT, or the per-document reasons of an EPR */
  errors: string[];
  /** stays "-11" for ever (trigger) */
  stuck: boolean;
  /** intermediate states shown before the verdict, in order */
  intermediates: string[];
  documents: DocumentRecord[];
}

/** A purchase seeded through the admin API for the RCV (purchases register). */
export interface PurchaseRecord {
  rutReceptor: string;
  rutEmisor: string;
  razonSocialEmisor?: string;
  tipoDte: number;
  folio: number;
  fchEmis: string;
  mntNeto: number;
  mntExe: number;
  iva: number;
  mntTotal: number;
  fechaRecepcion: string;
  /** register events the receiver recorded on it (purchase-register.ts) */
  events?: RegisterEvent[];
  /** a transfer (factoring) recorded through the admin API (routes/purchase-cessions.ts) */
  cesion?: { rutCesionario: string; razonSocialCesionario: string; fechaCesion: string };
}

/** A boleta de honorarios electrónica as the simulator keeps it (routes/bhe.ts). */
export interface BheRecord {
  numero: number;
  rutEmisor: string;
  rutReceptor: string;
  fechaEmision: string;
  descripcion: string;
  montoBruto: number;
  tasa: number;
  retencion: number;
  liquido: number;
  retencionPor: 'receptor' | 'emisor';
  /**
   * VIGENTE; VCA "vigente con solicitud de anulación pendiente" (asked after day 10 of the next
   * month: valid, its retention declared, until the receiver confirms); ANULADA
   */
  estado: 'VIGENTE' | 'VCA' | 'ANULADA';
  motivoAnulacion?: string;
  /** YYYY-MM-DD, Chile */
  solicitudAnulacion?: string;
  anuladaEl?: string;
  /** the receiver refused the annulment, or did not confirm it by the limit */
  anulacionRechazada?: boolean;
}
