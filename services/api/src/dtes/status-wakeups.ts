import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** The parts of node-postgres's pool and client this module uses (typeorm's driver holds them). */
interface PoolClient {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (n: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  removeAllListeners(event: string): unknown;
  release(err?: Error | boolean): void;
}
interface Pool {
  connect(): Promise<PoolClient>;
}

/** The channel the dtes trigger notifies on (migration DtesStatusNotify1763812100000). */
export const DTE_STATUS_CHANNEL = 'dte_status';

/**
 * Wakes `Prefer: wait` requests when their document's track id or status changes, from
 * PostgreSQL's LISTEN/NOTIFY. One connection of the process's pool listens while at least one
 * request waits (the number of waiters is bounded by WaitSlots) and is given back when the last
 * one leaves, so an idle process holds nothing.
 *
 * The trigger notifies only documents listed in `dte_status_waits` (migration
 * NotifyOnlyListeners1796800000000: a NOTIFY serializes its transaction's commit with every other
 * NOTIFYing one), so a document's row is written there, under this process's name, before LISTEN
 * and deleted when its last waiter leaves.
 */
export class StatusWakeups {
  private readonly waiters = new Map<string, Set<() => void>>();
  private client: Promise<PoolClient> | null = null;
  /** this process's name in dte_status_waits */
  private readonly waiter = randomUUID();
  /** each waited document's row in dte_status_waits, written or being written */
  private readonly rows = new Map<string, Promise<unknown>>();
  /**
   * the rows being deleted (their last waiter left): a new wait for the document writes its row
   * after that DELETE, or the DELETE, on another connection, could remove the new row
   */
  private readonly deleting = new Map<string, Promise<unknown>>();
  /** notifications received (for tests and figures) */
  notifications = 0;

  constructor(private readonly ds: DataSource) {}

  /**
   * Registers a wake-up for document `id` and resolves once its row in dte_status_waits is
   * written and LISTEN is in place, so a change that commits after this resolved is never
   * missed. Returns the function that unregisters it.
   */
  async subscribe(id: string, wake: () => void): Promise<() => void> {
    let set = this.waiters.get(id);
    if (!set) this.waiters.set(id, (set = new Set()));
    set.add(wake);
    const off = () => {
      const s = this.waiters.get(id);
      if (!s || !s.delete(wake)) return;
      if (s.size === 0) {
        this.waiters.delete(id);
        this.rows.delete(id);
        const gone = this.ds
          .query(`DELETE FROM dte_status_waits WHERE dte_id = $1 AND waiter = $2`, [id, this.waiter])
          .catch(() => undefined)
          .then(() => {
            if (this.deleting.get(id) === gone) this.deleting.delete(id);
          });
        this.deleting.set(id, gone);
      }
      if (this.waiters.size === 0) this.stopListening();
    };
    try {
      if (!this.rows.has(id))
        this.rows.set(
          id,
          (this.deleting.get(id) ?? Promise.resolve()).then(() =>
            this.ds.query(
              `INSERT INTO dte_status_waits (dte_id, waiter) VALUES ($1, $2)
               ON CONFLICT (dte_id, waiter) DO UPDATE SET since = now()`,
              [id, this.waiter],
            ),
          ),
        );
      await this.rows.get(id);
      await this.listen();
    } catch (err) {
      off();
      throw err;
    }
    return off;
  }

  private listen(): Promise<PoolClient> {
    if (!this.client) {
      const pool = (this.ds.driver as unknown as { master: Pool }).master;
      const p = pool.connect().then(async (c) => {
        c.on('notification', (n) => {
          if (n.channel !== DTE_STATUS_CHANNEL || !n.payload) return;
          this.notifications++;
          for (const w of this.waiters.get(n.payload) ?? []) w();
        });
        c.on('error', () => {
          // the connection broke: the next waiter opens a new one; current waiters fall back
          // to their periodic re-read
          if (this.client === p) this.client = null;
          for (const set of this.waiters.values()) for (const w of set) w();
        });
        try {
          await c.query(`LISTEN ${DTE_STATUS_CHANNEL}`);
        } catch (err) {
          c.release(err as Error);
          throw err;
        }
        return c;
      });
      p.catch(() => {
        if (this.client === p) this.client = null;
      });
      this.client = p;
      return p;
    }
    return this.client;
  }

  private stopListening(): void {
    const p = this.client;
    if (!p) return;
    this.client = null;
    // rows an api killed while it waited left behind (the trigger ignores them after 15 minutes)
    void this.ds
      .query(`DELETE FROM dte_status_waits WHERE since < now() - interval '15 minutes'`)
      .catch(() => undefined);
    void p
      .then(async (c) => {
        try {
          await c.query(`UNLISTEN ${DTE_STATUS_CHANNEL}`);
          c.removeAllListeners('notification');
          c.removeAllListeners('error');
          c.release();
        } catch (err) {
          c.release(err as Error);
        }
      })
      .catch(() => undefined);
  }
}
