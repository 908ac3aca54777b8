import type { DomainDeps } from '@dte/tenancy';

/** The configuration the register's answers and the RCV requests read (the SII's address). */
export interface ReceptionConfig {
  siiBaseUrl?: string;
  siiTimeoutMs: number;
}

export type ReceptionDeps = DomainDeps<ReceptionConfig>;
