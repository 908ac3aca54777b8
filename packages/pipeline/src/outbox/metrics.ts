import { metrics, onScrape } from '@dte/service-runtime';
import type { DataSource } from 'typeorm';

/**
 * dte_outbox_depth and dte_outbox_oldest_age_seconds, read from PostgreSQL when Prometheus
 * scrapes: the rows the relay has still to publish (set-aside rows, failed_at, excluded: they
 * have their own error log) and how long the oldest has waited. A growing age means the relay
 * is stuck or Kafka is gone. Returns the function that stops reporting.
 */
export function reportOutboxMetrics(dataSource: DataSource): () => void {
  return onScrape(async () => {
    const rows: { depth: string; age: number | null }[] = await dataSource.query(
      `SELECT count(*) AS depth, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age
         FROM outbox WHERE published_at IS NULL AND failed_at IS NULL`,
    );
    metrics.outboxDepth.set(Number(rows[0]?.depth ?? 0));
    metrics.outboxOldestAge.set(Math.max(0, rows[0]?.age ?? 0));
  });
}
