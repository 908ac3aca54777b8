import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Transactional outbox (table `outbox`): a message to publish, written in the same transaction
 * as the state change it announces. The relay (packages/pipeline/src/outbox/relay.ts) publishes unpublished
 * rows in id order under a PostgreSQL advisory lock (one active relay) and then sets
 * published_at: at-least-once, so every payload carries an `event_id` that consumers record.
 * Unpublished rows are found by `published_at IS NULL` (never `id > last_id`: ids commit out of
 * order). An insert NOTIFYs channel `outbox` to wake the relay; polling stays the fallback. A row
 * whose payload its Avro schema refuses is set aside (failed_at, last_error) so it cannot block the
 * rows behind it.
 */
@Entity({ name: 'outbox' })
@Index('outbox_unpublished_idx', ['id'], { where: 'published_at IS NULL AND failed_at IS NULL' })
export class OutboxMessage {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  /** logical topic name (no prefix), e.g. dte.commands */
  @Column({ type: 'text' })
  topic!: string;

  /** basename of schemas/avro/<schema>.avsc */
  @Column({ type: 'text' })
  schema!: string;

  @Column({ name: 'message_key', type: 'text', nullable: true })
  messageKey!: string | null;

  /** the Avro value as JSON */
  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  /** the payload's event_id (unique) */
  @Column({ name: 'event_id', type: 'text', unique: true })
  eventId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** set aside: its payload can never be published (the schema refuses it); see last_error */
  @Column({ name: 'failed_at', type: 'timestamptz', nullable: true })
  failedAt!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;
}
