import type { DataSource } from 'typeorm';

/**
 * The one loop of the mails this package sends from a table of its own (`dte_deliveries`,
 * `exchange_replies`): workers claim due rows under a lease (`FOR UPDATE SKIP LOCKED`, so several
 * api replicas can sweep), each claimed row is sent once, and the attempt is recorded on the row:
 * `sent` (sent_at, message_id) or a failure (attempts, last_error, next_attempt_at after a
 * doubling backoff, `failed` after `maxAttempts`). What a row holds and how it is mailed belong to
 * the caller.
 */

export interface DeliverySettings {
  /** attempts before a delivery is `failed` */
  maxAttempts: number;
  /** first retry delay; doubles per attempt */
  backoffMs: number;
  backoffMaxMs: number;
  /** how long one worker holds a delivery while sending */
  leaseMs: number;
  batch: number;
}

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  maxAttempts: 6,
  backoffMs: 60_000,
  backoffMaxMs: 6 * 3600_000,
  leaseMs: 120_000,
  batch: 20,
};

/** The wait before the next attempt after `attempts` failed ones: doubling, capped. */
export function retryDelayMs(
  s: Pick<DeliverySettings, 'backoffMs' | 'backoffMaxMs'>,
  attempts: number,
): number {
  return Math.min(s.backoffMs * 2 ** (attempts - 1), s.backoffMaxMs);
}

/** typeorm answers an UPDATE … RETURNING as [rows, count] (an INSERT as rows). */
export function updatedRows<T>(result: unknown): T[] {
  const r = result as unknown[];
  return (Array.isArray(r[0]) ? r[0] : r) as T[];
}

/** What a claim answers of a row: its id and the attempts made so far, plus what `send` needs. */
export interface LeasedRow {
  id: string;
  attempts: number;
}

/** How one attempt ended: `error` (the first 500 characters) when it failed. */
export type AttemptResult = { state: 'sent' } | { state: 'pending' | 'failed'; error: string };

export interface LeasedSendsOptions<R extends LeasedRow, O> {
  dataSource: DataSource;
  /**
   * The queue's table; its rows hold state ('pending' | 'sent' | 'failed'), attempts, last_error,
   * next_attempt_at, lease_until, sent_at, message_id and updated_at.
   */
  table: 'dte_deliveries' | 'exchange_replies';
  /** the columns a claim answers (`id` and `attempts` among them), as SQL */
  columns: string;
  settings: DeliverySettings;
  now: () => Date;
  /** mails one claimed row; answers the SMTP Message-ID */
  send: (row: R) => Promise<string>;
  /** the caller's outcome of an attempt */
  outcome: (row: R, result: AttemptResult) => O;
  logger?: { info(o: object, m: string): void; warn(o: object, m: string): void } | undefined;
  /** the log lines: `${name} sent` with `sentLog(row)`, `${name} failed` with `failedLog(row)`, attempts, err */
  log: { name: string; sent: (row: R) => object; failed: (row: R) => object };
}

/** A table of mails to send, claimed under a lease and retried with backoff (see the module). */
export class LeasedSends<R extends LeasedRow, O> {
  constructor(private readonly o: LeasedSendsOptions<R, O>) {}

  /** Sends every row now due, a batch at a time, one row after the other. */
  async sweep(): Promise<O[]> {
    const out: O[] = [];
    for (;;) {
      const due = await this.claim();
      if (due.length === 0) break;
      for (const d of due) out.push(await this.attempt(d));
      if (due.length < this.o.settings.batch) break;
    }
    return out;
  }

  /** Sends one pending row now, whatever its schedule (unless another worker holds it). */
  async sendNow(id: string): Promise<O> {
    const rows = updatedRows<R>(
      await this.o.dataSource.query(
        `UPDATE ${this.o.table} SET lease_until = $2, updated_at = $3
        WHERE id = $1 AND state = 'pending' AND (lease_until IS NULL OR lease_until < $3)
        RETURNING ${this.o.columns}`,
        [id, new Date(this.o.now().getTime() + this.o.settings.leaseMs), this.o.now()],
      ),
    );
    const first = rows[0];
    if (!first) throw new Error(`delivery ${id} is not pending`);
    return this.attempt(first);
  }

  private async claim(): Promise<R[]> {
    const now = this.o.now();
    const { table, settings } = this.o;
    return updatedRows<R>(
      await this.o.dataSource.query(
        `UPDATE ${table} SET lease_until = $2, updated_at = $1
        WHERE id IN (SELECT id FROM ${table}
                      WHERE state = 'pending' AND next_attempt_at <= $1
                        AND (lease_until IS NULL OR lease_until < $1)
                      ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING ${this.o.columns}`,
        [now, new Date(now.getTime() + settings.leaseMs), settings.batch],
      ),
    );
  }

  private async attempt(d: R): Promise<O> {
    const { dataSource: db, table, settings, log, logger } = this.o;
    try {
      const messageId = await this.o.send(d);
      await db.query(
        `UPDATE ${table} SET state = 'sent', attempts = attempts + 1, sent_at = $2, message_id = $3,
                last_error = NULL, lease_until = NULL, updated_at = $2 WHERE id = $1`,
        [d.id, this.o.now(), messageId],
      );
      logger?.info(log.sent(d), `${log.name} sent`);
      return this.o.outcome(d, { state: 'sent' });
    } catch (err) {
      const attempts = d.attempts + 1;
      const failed = attempts >= settings.maxAttempts;
      const message = (err as Error).message.slice(0, 500);
      await db.query(
        `UPDATE ${table} SET state = $2, attempts = $3, last_error = $4, next_attempt_at = $5,
                lease_until = NULL, updated_at = $6 WHERE id = $1`,
        [
          d.id,
          failed ? 'failed' : 'pending',
          attempts,
          message,
          new Date(this.o.now().getTime() + retryDelayMs(settings, attempts)),
          this.o.now(),
        ],
      );
      logger?.warn({ ...log.failed(d), attempts, err: message }, `${log.name} failed`);
      return this.o.outcome(d, { state: failed ? 'failed' : 'pending', error: message });
    }
  }
}
