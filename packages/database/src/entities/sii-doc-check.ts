import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The sii-poller's reconciliation schedule (table `sii_doc_checks`): one row per document whose
 * envelope the SII may hold although we have no track id (its upload ended `repeated` or
 * `unconfirmed`). Each check asks QueryEstDte, which names the document without a track id.
 * `active` rows are checked when next_check_at is due; `done` after the document's verdict (EPR,
 * RPR, RCH), `stuck` when the SII did not report the document within the attempt budget (or
 * reported other data under its folio), `no_permission` when the SII refused the query. The
 * document is never uploaded again from here: refresh-status re-arms the row (active,
 * attempts 0). `version` grows with every claim and re-arm, as in sii_polls.
 */
@Entity({ name: 'sii_doc_checks' })
@Index('sii_doc_checks_due_idx', ['nextCheckAt'], { where: `state = 'active'` })
export class SiiDocCheck {
  @PrimaryColumn({ name: 'dte_id', type: 'uuid' })
  dteId!: string;

  @Column({ name: 'upload_id', type: 'uuid' })
  uploadId!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @Column({ name: 'rut_emisor', type: 'text' })
  rutEmisor!: string;

  @Column({ name: 'sii_env', type: 'text' })
  siiEnv!: 'cert' | 'prod';

  @Column({ name: 'certificate_id', type: 'uuid' })
  certificateId!: string;

  @Column({ type: 'text' })
  state!: 'active' | 'done' | 'stuck' | 'no_permission';

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_check_at', type: 'timestamptz' })
  nextCheckAt!: Date;

  /** the last QueryEstDte ESTADO seen */
  @Column({ name: 'last_estado', type: 'text', nullable: true })
  lastEstado!: string | null;

  @Column({ name: 'last_glosa', type: 'text', nullable: true })
  lastGlosa!: string | null;

  @Column({ type: 'integer', default: 0 })
  version!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
