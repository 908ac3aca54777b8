// Every migration, in any order (typeorm orders them by the timestamp in the class name).
// Add one by creating `<timestamp>-<what>.ts` beside this file and appending its class here.
import type { MigrationInterface } from 'typeorm';
import { ProcessedEvents1763780000000 } from './1763780000000-processed-events';
import { ApiCore1763780100000 } from './1763780100000-api-core';
import { Webhooks1763790000000 } from './1763790000000-webhooks';
import { DtePipeline1763800000000 } from './1763800000000-dte-pipeline';
import { DteCessions1763800100000 } from './1763800100000-dte-cessions';
import { SiiUploadsPolls1763800500000 } from './1763800500000-sii-uploads-polls';
import { DtesIdempotencyPerEnv1763800700000 } from './1763800700000-dtes-idempotency-per-env';
import { OutboxQuarantine1763800800000 } from './1763800800000-outbox-quarantine';
import { SiiReconciliation1763800900000 } from './1763800900000-sii-reconciliation';
import { ProductionGates1763801000000 } from './1763801000000-production-gates';
import { WebhookSecretsSealed1763801100000 } from './1763801100000-webhook-secrets-sealed';
import { DteReferencesIndex1763803000000 } from './1763803000000-dte-references-index';
import { RcvReception1763804000000 } from './1763804000000-rcv-reception';
import { DtesIdempotencyPerCompany1763809000000 } from './1763809000000-dtes-idempotency-per-company';
import { CompaniesSiiOficina1763802000000 } from './1763802000000-companies-sii-oficina';
import { DteDeliveries1763802100000 } from './1763802100000-dte-deliveries';
import { Accounts1763806000000 } from './1763806000000-accounts';
import { AgentsOauthMcp1763810000000 } from './1763810000000-agents-oauth-mcp';
import { BoletasBhe1763807000000 } from './1763807000000-boletas-bhe';
import { OutboxHeaders1763808000000 } from './1763808000000-outbox-headers';
import { WebhookDeliveriesQueuedUntil1763812000000 } from './1763812000000-webhook-deliveries-queued-until';
import { DtesStatusNotify1763812100000 } from './1763812100000-dtes-status-notify';
import { WebhookSubscriptionsCompany1763812200000 } from './1763812200000-webhook-subscriptions-company';
import { DtesUnsentIndex1763813000000 } from './1763813000000-dtes-unsent-index';
import { DtesRequestId1795539900000 } from './1795539900000-dtes-request-id';
import { ToastLz41795565000000 } from './1795565000000-toast-lz4';
import { McpAuditLogOrg1796100000000 } from './1796100000000-mcp-audit-log-org';
import { BoletasBheSiiRules1796400000000 } from './1796400000000-boletas-bhe-sii-rules';
import { Billing1796600000000 } from './1796600000000-billing';
import { OrganizationRateLimit1796000000000 } from './1796000000000-organization-rate-limit';
import { UserTokens1796200000000 } from './1796200000000-user-tokens';
import { ExchangeReplies1796300000000 } from './1796300000000-exchange-replies';
import { RcvRegisterFields1796300100000 } from './1796300100000-rcv-register-fields';
import { SiiPollsPace1796700000000 } from './1796700000000-sii-polls-pace';
import { NotifyOnlyListeners1796800000000 } from './1796800000000-notify-only-listeners';
import { ReferencesIndexPartial1796900000000 } from './1796900000000-references-index-partial';

export const migrations: (new () => MigrationInterface)[] = [
  ProcessedEvents1763780000000,
  ApiCore1763780100000,
  Webhooks1763790000000,
  DtePipeline1763800000000,
  DteCessions1763800100000,
  SiiUploadsPolls1763800500000,
  DtesIdempotencyPerEnv1763800700000,
  OutboxQuarantine1763800800000,
  SiiReconciliation1763800900000,
  ProductionGates1763801000000,
  WebhookSecretsSealed1763801100000,
  DteReferencesIndex1763803000000,
  RcvReception1763804000000,
  DtesIdempotencyPerCompany1763809000000,
  CompaniesSiiOficina1763802000000,
  DteDeliveries1763802100000,
  Accounts1763806000000,
  AgentsOauthMcp1763810000000,
  BoletasBhe1763807000000,
  OutboxHeaders1763808000000,
  WebhookDeliveriesQueuedUntil1763812000000,
  DtesStatusNotify1763812100000,
  WebhookSubscriptionsCompany1763812200000,
  DtesUnsentIndex1763813000000,
  DtesRequestId1795539900000,
  ToastLz41795565000000,
  McpAuditLogOrg1796100000000,
  BoletasBheSiiRules1796400000000,
  Billing1796600000000,
  OrganizationRateLimit1796000000000,
  UserTokens1796200000000,
  ExchangeReplies1796300000000,
  RcvRegisterFields1796300100000,
  SiiPollsPace1796700000000,
  NotifyOnlyListeners1796800000000,
  ReferencesIndexPartial1796900000000,
];
