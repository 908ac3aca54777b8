/**
 * The one leased send loop of both senders (ReceptorDelivery, ExchangeReplyDelivery), on real
 * PostgreSQL (an `exchange_replies` table of a migrated schema): each attempt recorded on its row,
 * the backoff doubling up to its cap, `failed` at the attempts limit, a lease that keeps a second
 * worker off a row being sent, batches until nothing is due, the log lines.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { LeasedSends, type AttemptResult, type DeliverySettings } from '../src';

interface Row {
  id: string;
  numero: string;
  attempts: number;
}

const SETTINGS: DeliverySettings = {
  maxAttempts: 4,
  backoffMs: 60_000,
  backoffMaxMs: 150_000,
  leaseMs: 120_000,
  batch: 2,
};

describe('receptor-delivery: the leased send loop (LeasedSends) on real PostgreSQL', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  let companyId: string;
  let organizationId: string;

  before(async () => {
    db = await migratedDatabase('leased_sends');
    organizationId = randomUUID();
    await db.dataSource.query(`INSERT INTO organizations (id, name) VALUES ($1, 'org')`, [organizationId]);
    const [c] = await db.dataSource.query(
      `INSERT INTO companies (organization_id, rut, razon_social) VALUES ($1, '76192083-9', 'Empresa') RETURNING id`,
      [organizationId],
    );
    companyId = c.id;
  });
  after(async () => db?.cleanup());

  /** `n` pending replies due at `due`, numbered from `from`; answers their ids. */
  async function replies(n: number, due: Date, from = 1): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const [r] = await db.dataSource.query(
        `INSERT INTO exchange_replies (organization_id, company_id, sii_env, kind, numero, rut_destino, xml, correos, next_attempt_at)
         VALUES ($1, $2, 'cert', 'recepcion', $3, '96543210-8', '\\x3c3e', '{a@x.cl}', $4) RETURNING id`,
        [organizationId, companyId, from + i, due],
      );
      ids.push(r.id);
    }
    return ids;
  }

  const rowOf = async (id: string) =>
    (
      await db.dataSource.query(
        `SELECT state, attempts, last_error, next_attempt_at, lease_until, sent_at, message_id
           FROM exchange_replies WHERE id = $1`,
        [id],
      )
    )[0] as {
      state: string;
      attempts: number;
      last_error: string | null;
      next_attempt_at: Date;
      lease_until: Date | null;
      sent_at: Date | null;
      message_id: string | null;
    };

  function loop(opts: {
    clock: () => Date;
    send: (r: Row) => Promise<string>;
    only?: string[];
    logs?: [string, object, string][];
  }) {
    return new LeasedSends<Row, { id: string } & AttemptResult>({
      dataSource: db.dataSource,
      table: 'exchange_replies',
      columns: 'id, numero, attempts',
      settings: SETTINGS,
      now: opts.clock,
      send: opts.send,
      outcome: (r, result) => ({ id: r.id, ...result }),
      logger: {
        info: (o, m) => opts.logs?.push(['info', o, m]),
        warn: (o, m) => opts.logs?.push(['warn', o, m]),
      },
      log: {
        name: 'test reply',
        sent: (r) => ({ replyId: r.id, numero: r.numero }),
        failed: (r) => ({ replyId: r.id }),
      },
    });
  }

  /** the outcomes of `ids` only (other tests' rows may be due in the same table) */
  const mine = <T extends { id: string }>(out: T[], ids: string[]) => out.filter((o) => ids.includes(o.id));

  it('a failure is recorded and retried after 1, 2, then 2.5 min (capped); the fourth attempt is final', async () => {
    const t0 = new Date(Date.now() - 3600_000);
    let now = t0;
    const [id] = await replies(1, t0, 100);
    const logs: [string, object, string][] = [];
    const failing = loop({
      clock: () => now,
      send: async () => Promise.reject(new Error('550 mailbox unavailable')),
      logs,
    });
    const waits: number[] = [];
    const states: string[] = [];
    for (let i = 0; i < 4; i++) {
      const out = mine(await failing.sweep(), [id!]);
      expect(out).to.have.length(1);
      states.push(out[0]!.state);
      const row = await rowOf(id!);
      expect(row.attempts).to.equal(i + 1);
      expect(row.last_error).to.equal('550 mailbox unavailable');
      expect(row.lease_until).to.equal(null);
      waits.push(new Date(row.next_attempt_at).getTime() - now.getTime());
      // not due before its time: a sweep a second early finds nothing of it
      now = new Date(new Date(row.next_attempt_at).getTime() - 1000);
      expect(mine(await failing.sweep(), [id!])).to.deep.equal([]);
      now = new Date(row.next_attempt_at);
    }
    expect(states).to.deep.equal(['pending', 'pending', 'pending', 'failed']);
    expect(waits).to.deep.equal([60_000, 120_000, 150_000, 150_000]);
    expect((await rowOf(id!)).state).to.equal('failed');
    // a failed row is never claimed again, even when a working server is back
    const working = loop({ clock: () => new Date(now.getTime() + 86400_000), send: async () => '<m@x>' });
    expect(mine(await working.sweep(), [id!])).to.deep.equal([]);
    const warn = logs.find((l) => l[0] === 'warn');
    expect(warn).to.deep.equal([
      'warn',
      { replyId: id, attempts: 1, err: '550 mailbox unavailable' },
      'test reply failed',
    ]);
    // the error kept on the row is bounded
    const [long] = await replies(1, t0, 200);
    await loop({ clock: () => now, send: async () => Promise.reject(new Error('x'.repeat(2000))) }).sweep();
    expect((await rowOf(long!)).last_error).to.have.length(500);
  });

  it('a sent row records its Message-ID and is not sent again; several batches in one sweep', async () => {
    const t0 = new Date(Date.now() - 60_000);
    const ids = await replies(5, t0, 300);
    const logs: [string, object, string][] = [];
    const sent: string[] = [];
    const ok = loop({
      clock: () => new Date(),
      send: async (r) => {
        sent.push(r.id);
        return `<${r.numero}@test>`;
      },
      logs,
    });
    const out = mine(await ok.sweep(), ids);
    expect(out.map((o) => o.state)).to.deep.equal(['sent', 'sent', 'sent', 'sent', 'sent']);
    expect(sent.filter((s) => ids.includes(s)).sort()).to.deep.equal([...ids].sort());
    for (const [i, id] of ids.entries()) {
      const row = await rowOf(id);
      expect(row).to.include({ state: 'sent', attempts: 1, last_error: null, lease_until: null });
      expect(row.message_id).to.equal(`<${300 + i}@test>`);
      expect(row.sent_at).to.be.instanceOf(Date);
    }
    expect(logs.find((l) => (l[1] as { replyId?: string }).replyId === ids[0])).to.deep.equal([
      'info',
      { replyId: ids[0], numero: '300' },
      'test reply sent',
    ]);
    expect(mine(await ok.sweep(), ids)).to.deep.equal([]);
  });

  it('two workers sweeping at once send each row once (the lease); sendNow refuses a row another holds', async () => {
    const ids = await replies(6, new Date(Date.now() - 60_000), 400);
    const count = new Map<string, number>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = () =>
      loop({
        clock: () => new Date(),
        send: async (r) => {
          count.set(r.id, (count.get(r.id) ?? 0) + 1);
          await gate;
          return '<m@x>';
        },
      });
    const a = slow().sweep();
    const b = slow().sweep();
    await new Promise((r) => setTimeout(r, 300));
    // a row under a lease: not pending for a resend either
    const held = [...count.keys()].find((k) => ids.includes(k))!;
    const err = await loop({ clock: () => new Date(), send: async () => '<m@x>' })
      .sendNow(held)
      .catch((e: Error) => e);
    expect(String(err)).to.contain(`delivery ${held} is not pending`);
    release();
    const outs = [...(await a), ...(await b)];
    expect(mine(outs, ids)).to.have.length(6);
    expect(ids.map((id) => count.get(id))).to.deep.equal([1, 1, 1, 1, 1, 1]);
  });

  it('sendNow sends a pending row at once, whatever its schedule', async () => {
    const [later] = await replies(1, new Date(Date.now() + 3600_000), 500);
    const l = loop({ clock: () => new Date(), send: async () => '<now@x>' });
    expect(mine(await l.sweep(), [later!])).to.deep.equal([]);
    expect(await l.sendNow(later!)).to.deep.equal({ id: later, state: 'sent' });
    expect(await rowOf(later!)).to.include({ state: 'sent', message_id: '<now@x>', attempts: 1 });
    const again = await l.sendNow(later!).catch((e: Error) => e);
    expect(String(again)).to.contain('is not pending');
  });
});
