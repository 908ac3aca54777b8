import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The events feed of a document (table `dte_events`, GET /dtes/:id/events): one row per
 * dte-status record the projector applied, unique by event_id so a replay adds nothing.
 * Chronological order is (observed_at, id).
 */
@Entity({ name: 'dte_events' })
@Index('dte_events_dte_idx', ['dteId', 'observedAt', 'id'])
export class DteEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'dte_id', type: 'uuid' })
  dteId!: string;

  @Column({ name: 'event_id', type: 'text', unique: true })
  eventId!: string;

  @Column({ name: 'sii_status', type: 'text' })
  siiStatus!: string;

  @Column({ type: 'text', nullable: true })
  glosa!: string | null;

  @Column({ name: 'track_id', type: 'text', nullable: true })
  trackId!: string | null;

  /** the service that observed the change */
  @Column({ type: 'text' })
  source!: string;

  @Column({ name: 'observed_at', type: 'timestamptz' })
  observedAt!: Date;

  @Column({ name: 'recorded_at', type: 'timestamptz', default: () => 'now()' })
  recordedAt!: Date;
}
