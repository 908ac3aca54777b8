import { Column, Entity, PrimaryColumn } from 'typeorm';

/** What the webhooks service has applied of a document's status (the no-going-backwards rule). */
@Entity({ name: 'webhook_document_states' })
export class WebhookDocumentState {
  @PrimaryColumn({ name: 'dte_id', type: 'uuid' })
  dteId!: string;

  @Column({ name: 'sii_status', type: 'text', nullable: true })
  siiStatus!: string | null;

  /** observed_at of that status, as the record carried it (ISO-8601) */
  @Column({ name: 'observed_at', type: 'text', nullable: true })
  observedAt!: string | null;

  /** dte.emitted already produced */
  @Column({ type: 'boolean', default: false })
  emitted!: boolean;
}
