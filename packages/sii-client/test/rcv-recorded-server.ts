/**
 * A stand-in for the SII's RCV facade that answers with the recorded answers in
 * fixtures/rcv (the SII's own format): `<op>-<operacion>-<estadoContab>[-<codTipoDoc>].json`,
 * an empty answer (`data: null`) for anything not recorded. It keeps every request body, so a
 * test can check what the client sent. Served under `/cert` and `/prod` like the simulator.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const RECORDED_DIR = path.join(__dirname, 'fixtures', 'rcv');

export interface RecordedRequest {
  path: string;
  cookie: string | undefined;
  body: { metaData: Record<string, unknown>; data: Record<string, unknown> };
}

export class RecordedRcvServer {
  readonly requests: RecordedRequest[] = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        this.requests.push({ path: req.url ?? '', cookie: req.headers.cookie, body });
        const op = (req.url ?? '').split('/').pop() ?? '';
        const d = body.data ?? {};
        const name =
          op === 'getResumen'
            ? `resumen-${d.operacion}-${d.estadoContab}.json`
            : `detalle-${d.operacion}-${d.estadoContab}-${d.codTipoDoc}.json`;
        const file = path.join(RECORDED_DIR, name);
        res.setHeader('Content-Type', 'application/json;charset=UTF-8');
        res.end(
          existsSync(file)
            ? readFileSync(file)
            : JSON.stringify({ data: null, metaData: body.metaData, respEstado: { codRespuesta: 0 } }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
