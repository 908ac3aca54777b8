// Every entity of the service. Add a new entity by importing its class and appending it to
// `entities` (and re-exporting it).
import { ProcessedEvent } from './processed-event';
import { Organization } from './organization';
import { Company } from './company';
import { Branch } from './branch';
import { User } from './user';
import { Membership, type MemberRole } from './membership';
import { ApiKey } from './api-key';
import { Certificate } from './certificate';
import { Caf } from './caf';
import { CafAutoSetting } from './caf-auto-setting';
import { WebhookSubscription } from './webhook-subscription';
import { WebhookDelivery } from './webhook-delivery';
import { WebhookDocumentState } from './webhook-document-state';
import { Dte } from './dte';
import { OutboxMessage } from './outbox-message';
import { DteEvent } from './dte-event';
import { SiiUpload } from './sii-upload';
import { SiiPoll } from './sii-poll';
import { SiiDocCheck } from './sii-doc-check';

export { ProcessedEvent };
// api core (issue 5)
export { Organization, Company, Branch, User, Membership, ApiKey, Certificate, Caf, CafAutoSetting };
export type { MemberRole };
// webhooks (issue 7)
export { WebhookSubscription, WebhookDelivery, WebhookDocumentState };
// emission pipeline (issue 6)
export { Dte, OutboxMessage, DteEvent };
// emission pipeline workers (issue 6)
export { SiiUpload, SiiPoll, SiiDocCheck };

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const entities: Function[] = [
  ProcessedEvent,
  Organization,
  Company,
  Branch,
  User,
  Membership,
  ApiKey,
  Certificate,
  Caf,
  CafAutoSetting,
  WebhookSubscription,
  WebhookDelivery,
  WebhookDocumentState,
  Dte,
  OutboxMessage,
  DteEvent,
  SiiUpload,
  SiiPoll,
  SiiDocCheck,
];
