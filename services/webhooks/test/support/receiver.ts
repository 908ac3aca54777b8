import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestPki } from './test-ca';

export interface Received {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** the raw body exactly as received */
  raw: Buffer;
}

export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number };

/** A real https webhook receiver on loopback (port 0) that records every request. */
export class Receiver {
  readonly received: Received[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  private server!: https.Server;
  port = 0;

  constructor(
    private readonly pki: TestPki,
    public reply: (r: Received) => Reply = () => ({ status: 200 }),
    private readonly host = '127.0.0.1',
  ) {}

  async start(): Promise<this> {
    this.server = https.createServer(
      { key: this.pki.serverKeyPem, cert: this.pki.serverCertPem },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const r: Received = {
            at: Date.now(),
            method: req.method ?? '',
            path: req.url ?? '',
            headers: req.headers,
            raw: Buffer.concat(chunks),
          };
          this.received.push(r);
          this.waiters = this.waiters.filter((w) =>
            this.received.length >= w.n ? (w.resolve(), false) : true,
          );
          const reply = this.reply(r);
          const send = () => {
            if (res.destroyed) return;
            res.writeHead(reply.status, reply.headers ?? {}).end('ok');
          };
          if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
          else send();
        });
      },
    );
    await new Promise<void>((resolve) => this.server.listen(0, this.host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook', host = this.host === '::1' ? '[::1]' : this.host): string {
    return `https://${host}:${this.port}${path}`;
  }

  /** resolves once `n` requests have arrived, or rejects after `timeoutMs` */
  waitFor(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`receiver got ${this.received.length} of ${n} requests`)),
        timeoutMs,
      );
      this.waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
