import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One row per (consumer, event) that a consumer has handled: the consumers' idempotency record.
 * A consumer inserts it in the same transaction as its effects (see `claimEvent`), so a
 * redelivered event finds it and is skipped, and a rolled-back attempt leaves no row.
 */
@Entity({ name: 'processed_events' })
@Index('processed_events_processed_at_idx', ['processedAt'])
export class ProcessedEvent {
  /** the consumer (service and purpose), e.g. `signer.commands` */
  @PrimaryColumn({ type: 'varchar', length: 100 })
  consumer!: string;

  /** the event's id (unique per producer), e.g. the outbox row id or a document id + status */
  @PrimaryColumn({ name: 'event_id', type: 'varchar', length: 200 })
  eventId!: string;

  @Column({ name: 'processed_at', type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}
