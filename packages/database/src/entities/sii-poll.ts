import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The sii-poller's durable schedule (table `sii_polls`): one row per upload (track id) being
 * watched. `active` rows are polled when next_poll_at is due (a poll pushes next_poll_at ahead
 * by a lease first, so a process that dies mid-poll leaves the row due again later); `done` after
 * the verdict, `stuck` when the attempts ran out, `no_permission` when the SII refused the
 * query. A refresh-status request re-arms the row (active, attempts 0). `version` grows with
 * every claim and re-arm, so a poll finishing late never overwrites a newer arm.
 */
@Entity({ name: 'sii_polls' })
@Index('sii_polls_due_idx', ['nextPollAt'], { where: `state = 'active'` })
export class SiiPoll {
  @PrimaryColumn({ name: 'upload_id', type: 'uuid' })
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

  @Column({ name: 'track_id', type: 'text' })
  trackId!: string;

  @Column({ name: 'dte_ids', type: 'uuid', array: true })
  dteIds!: string[];

  @Column({ type: 'text' })
  state!: 'active' | 'done' | 'stuck' | 'no_permission';

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_poll_at', type: 'timestamptz' })
  nextPollAt!: Date;

  /** the last upload-level code published (so each code is published once per change) */
  @Column({ name: 'last_estado', type: 'text', nullable: true })
  lastEstado!: string | null;

  @Column({ name: 'last_glosa', type: 'text', nullable: true })
  lastGlosa!: string | null;

  @Column({ type: 'integer', default: 0 })
  version!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** when the row was scheduled or last re-armed: the envelope's age for the poll pace */
  @Column({ name: 'armed_at', type: 'timestamptz', nullable: true })
  armedAt!: Date | null;

  /** the instant of the last answered QueryEstUp (the api's sii_last_polled reads it) */
  @Column({ name: 'polled_at', type: 'timestamptz', nullable: true })
  polledAt!: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
