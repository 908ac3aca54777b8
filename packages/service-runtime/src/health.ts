import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { renderMetrics } from './metrics';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
}

/**
 * A readiness check that has not answered within this many ms fails: a stopped PostgreSQL, Redis
 * or Kafka often does not refuse at once (clients queue and reconnect), and the probe must say
 * "not ready" within its own timeout rather than hang.
 */
export const CHECK_TIMEOUT_MS = 2500;

/** `p`, or a rejection saying `name` did not answer within `ms`. */
export function withDeadline<T>(p: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * GET /healthz answers 200 while the process runs; GET /readyz runs every check and answers
 * 200 {status:"ready"} or 503 with the failing checks; GET /metrics answers the process's
 * Prometheus metrics (metrics.ts). Services without an HTTP API of their own expose their health
 * this way. It listens on `host`: HEALTH_HOST, else 127.0.0.1 (the Helm chart sets 0.0.0.0 so
 * Prometheus can scrape /metrics).
 */
export async function startHealthServer(
  port: number,
  checks: HealthCheck[] = [],
  host = process.env.HEALTH_HOST || '127.0.0.1',
): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
        return;
      }
      if (req.url === '/readyz') {
        const failing: { name: string; error: string }[] = [];
        await Promise.all(
          checks.map(async (c) => {
            try {
              await withDeadline(c.check(), CHECK_TIMEOUT_MS, c.name);
            } catch {
              // the check's name only: a driver's error text can carry hosts, users or values
              failing.push({ name: c.name, error: 'unavailable' });
            }
          }),
        );
        const body = failing.length === 0 ? { status: 'ready' } : { status: 'not_ready', failing };
        res.writeHead(failing.length === 0 ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
        return;
      }
      if (req.url === '/metrics') {
        try {
          const { contentType, body } = await renderMetrics();
          res.writeHead(200, { 'content-type': contentType }).end(body);
        } catch (err) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end((err as Error).message);
        }
        return;
      }
      res.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
