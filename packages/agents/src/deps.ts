import type { EmissionConfig } from '@dte/emission';
import type { ReceptionConfig } from '@dte/reception';
import type { DomainDeps } from '@dte/tenancy';

/** The MCP tools call the emission and reception functions of the REST routes: both slices. */
export type AgentsDeps = DomainDeps<EmissionConfig & ReceptionConfig>;
