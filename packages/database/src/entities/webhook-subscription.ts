import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A webhook endpoint registered by an organization for one environment (that of the API key
 * that registered it). The signing secret is shown to the client only on creation and rotation.
 */
@Entity({ name: 'webhook_subscriptions' })
@Index('webhook_subscriptions_org_env_idx', ['organizationId', 'siiEnv'])
export class WebhookSubscription {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  /** the company of a company-scoped subscription; null: organization-wide */
  @Column({ name: 'company_id', type: 'uuid', nullable: true })
  companyId!: string | null;

  @Column({ name: 'sii_env', type: 'text' })
  siiEnv!: 'cert' | 'prod';

  @Column({ type: 'text' })
  url!: string;

  /** event types: dte.emitted, dte.status_changed, dte.accepted, dte.rejected */
  @Column({ type: 'text', array: true })
  events!: string[];

  /** the HMAC signing secret in clear: only subscriptions made before secrets were sealed */
  @Column({ type: 'text', nullable: true })
  secret!: string | null;

  /** the HMAC signing secret sealed with @dte/secrets (AAD webhookSecretAad(id)) */
  @Column({ name: 'secret_sealed', type: 'jsonb', nullable: true })
  secretSealed!: unknown;

  @Column({ type: 'boolean', default: true })
  active!: boolean;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason!: string | null;

  /** exhausted deliveries since the last delivered one (three deactivate the endpoint) */
  @Column({ name: 'consecutive_exhausted', type: 'integer', default: 0 })
  consecutiveExhausted!: number;

  /** the Idempotency-Key of the creating request (unique per organization and environment) */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey!: string | null;

  /** sha-256 of the creating request's url and events, to tell a repeat from a conflicting reuse */
  @Column({ name: 'request_hash', type: 'text', nullable: true })
  requestHash!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
