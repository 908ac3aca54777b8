import type { DomainDeps } from '@dte/tenancy';
import type { CafDocumentsProbe } from './documents-probe';
import type { FolioGrantClient } from './folio-grant-client';
import type { SiiCafKeys } from './sii-caf-keys';

/** The configuration the folio side reads (the api's LOW_FOLIOS_THRESHOLD, CAF_*, SII_CAF_KEYS_FILE). */
export interface FoliosConfig {
  lowFoliosThreshold: number;
  cafRequestLockSec: number;
  cafAutoIntervalSec: number;
  siiCafKeys?: SiiCafKeys;
}

/** What the CAF requests and the auto-stamping loop need: the SII's folio grant and CAF probe too. */
export interface FoliosDeps extends DomainDeps<FoliosConfig> {
  folioGrant: FolioGrantClient;
  cafDocuments: CafDocumentsProbe;
}
