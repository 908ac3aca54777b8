import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One event for one subscription and its attempts (unique per subscription and event id).
 * The payload is fixed when the record is created, so every attempt sends the same body.
 */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDelivery {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'subscription_id', type: 'uuid' })
  subscriptionId!: string;

  /** evt_<uuid>, the envelope's id */
  @Column({ name: 'event_id', type: 'text' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ type: 'text' })
  payload!: string;

  /** pending, delivered, exhausted */
  @Column({ type: 'text', default: 'pending' })
  state!: 'pending' | 'delivered' | 'exhausted';

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  /** an attempt in flight holds the record until then */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  /** the overdue sweep put it in a process's in-memory queue until then (no second queueing) */
  @Column({ name: 'queued_until', type: 'timestamptz', nullable: true })
  queuedUntil!: Date | null;

  @Column({ name: 'last_status', type: 'integer', nullable: true })
  lastStatus!: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}
