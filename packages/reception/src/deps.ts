import type { SiiAddressConfig } from '@dte/sii-client';
import type { DomainDeps } from '@dte/tenancy';

/** The configuration the register's answers and the RCV requests read: the SII's address. */
export type ReceptionConfig = SiiAddressConfig;

export type ReceptionDeps = DomainDeps<ReceptionConfig>;
