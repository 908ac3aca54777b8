import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * NOTIFY only when somebody listens (issue 27).
 *
 * A transaction that NOTIFYs holds PostgreSQL's one notify lock from its commit's start to its end,
 * WAL flush included, so NOTIFYing commits never share a flush: every status change of every
 * document (signer, uploader, poller, projector) and every outbox insert (each POST, each worker's
 * status) queued behind the others' flushes. At 300 documents a second that lock was what the
 * workers' commits waited on most, and the POSTs behind them. Now:
 * - `dte_status` (the dtes trigger) is sent only for a document listed in `dte_status_waits`: the
 *   api writes the documents a `Prefer: wait` request waits for before it LISTENs and deletes them
 *   when the wait ends. A row its api left behind (a kill -9) stops counting after 15 minutes
 *   (the longest wait is 60 s); the api deletes such rows.
 * - `outbox` (the outbox trigger) is sent only while the active relay sleeps: it writes its row in
 *   `outbox_relay_sleeping` before its last look at the outbox and deletes it when it wakes, so
 *   while it publishes, which is all the time under load, nobody notifies it.
 * Both tables are UNLOGGED: no WAL, and a crash of PostgreSQL, which empties them, also drops every
 * listener. (Timestamp: the 13-digit JavaScript form TypeORM reads, range 17968xxxxxxxx of issue 27.)
 */
export class NotifyOnlyListeners1796800000000 implements MigrationInterface {
  name = 'NotifyOnlyListeners1796800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNLOGGED TABLE dte_status_waits (
        dte_id uuid NOT NULL,
        waiter text NOT NULL,
        since timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (dte_id, waiter)
      )`);
    await q.query(`CREATE OR REPLACE FUNCTION dtes_status_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM dte_status_waits
                    WHERE dte_id = NEW.id AND since > now() - interval '15 minutes') THEN
          PERFORM pg_notify('dte_status', NEW.id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE UNLOGGED TABLE outbox_relay_sleeping (
        relay text PRIMARY KEY,
        since timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM outbox_relay_sleeping) THEN
          PERFORM pg_notify('outbox', '');
        END IF;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox', '');
        RETURN NULL;
      END $$`);
    await q.query(`DROP TABLE outbox_relay_sleeping`);
    await q.query(`CREATE OR REPLACE FUNCTION dtes_status_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('dte_status', NEW.id::text);
        RETURN NULL;
      END $$`);
    await q.query(`DROP TABLE dte_status_waits`);
  }
}
