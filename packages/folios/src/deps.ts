import type { DomainDeps } from '@dte/tenancy';
import type { CafDocumentsProbe } from './documents-probe';
import type { FolioGrantClient } from './folio-grant-client';
import type { SiiCafKeys } from './sii-caf-keys';

/** The configuration the folio side reads (the api's LOW_FOLIOS_THRESHOLD, CAF_*, SII_CAF_KEYS_FILE). */
export interface FoliosConfig {
  /** a type whose current folios are at or below this is flagged low_folios */
  lowFoliosThreshold: number;
  /** how long a folio request holds the Redis lock of its (organization, environment, type) */
  cafRequestLockSec: number;
  /** seconds between automatic stamping sweeps; 0 disables them in this process */
  cafAutoIntervalSec: number;
  /**
   * The SII's CAF-signing public keys per environment and IDK (SII_CAF_KEYS_FILE): every CAF,
   * uploaded or granted, must carry a FRMA that verifies with the key of its IDK. Unset: CAFs are
   * not verified (a warning at start-up); production deployments set it.
   */
  siiCafKeys?: SiiCafKeys;
}

/** What the CAF requests and the auto-stamping loop need: the SII's folio grant and CAF probe too. */
export interface FoliosDeps extends DomainDeps<FoliosConfig> {
  folioGrant: FolioGrantClient;
  cafDocuments: CafDocumentsProbe;
}
