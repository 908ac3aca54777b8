import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One EnvioDTE of the sii-uploader (table `sii_uploads`). States:
 *   claimed   its documents are bound to it (dtes.upload_id), nothing has been sent yet;
 *   sending   the exact bytes are stored (envio_xml) and a DTEUpload may have been made: from
 *             here on only those same bytes are ever sent again (the SII answers a repeated file
 *             with STATUS 99), never another envelope with these documents;
 *   accepted  the SII gave track_id (also on each document); dte.uploaded and `sending` published;
 *   failed    emision_fallida published for its documents;
 *   repeated  the SII answered STATUS 99 to our stored bytes: it holds them although we have no
 *             track id; envio_repetido published (an intermediate status) and each document
 *             scheduled in sii_doc_checks, where QueryEstDte finds its verdict;
 *   unconfirmed  no readable answer to an attempt that may have reached the SII
 *             (maybe_registered) and the attempts ran out (or a later one was refused): nothing
 *             published, each document scheduled in sii_doc_checks as for `repeated`.
 * lease_until: while in the future, one uploader instance is working on the row.
 */
@Entity({ name: 'sii_uploads' })
@Index('sii_uploads_due_idx', ['nextAttemptAt'], { where: `state IN ('claimed', 'sending')` })
export class SiiUpload {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @Column({ name: 'sii_env', type: 'text' })
  siiEnv!: 'cert' | 'prod';

  @Column({ name: 'rut_emisor', type: 'text' })
  rutEmisor!: string;

  @Column({ name: 'certificate_id', type: 'uuid' })
  certificateId!: string;

  @Column({ name: 'dte_ids', type: 'uuid', array: true })
  dteIds!: string[];

  @Column({ type: 'text' })
  state!: 'claimed' | 'sending' | 'accepted' | 'failed' | 'repeated' | 'unconfirmed';

  @Column({ name: 'envio_xml', type: 'bytea', nullable: true })
  envioXml!: Buffer | null;

  @Column({ name: 'envio_sha256', type: 'text', nullable: true })
  envioSha256!: string | null;

  /** DTEUpload attempts made */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** a DTEUpload is in flight; still true when the next attempt starts = its fate is unknown */
  @Column({ name: 'attempt_open', type: 'boolean', default: false })
  attemptOpen!: boolean;

  /** some attempt may have reached the SII (unknown fate, unreadable answer, sent then failed) */
  @Column({ name: 'maybe_registered', type: 'boolean', default: false })
  maybeRegistered!: boolean;

  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt!: Date;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: 'track_id', type: 'text', nullable: true })
  trackId!: string | null;

  /** the outcome kind of the last DTEUpload (accepted, transient, repeated, ...) */
  @Column({ type: 'text', nullable: true })
  outcome!: string | null;

  @Column({ name: 'outcome_glosa', type: 'text', nullable: true })
  outcomeGlosa!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  @Column({ name: 'uploaded_at', type: 'timestamptz', nullable: true })
  uploadedAt!: Date | null;
}
