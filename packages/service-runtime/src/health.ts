import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * GET /healthz answers 200 while the process runs; GET /readyz runs every check and answers
 * 200 {status:"ready"} or 503 with the failing checks. Services without an HTTP API of their
 * own expose their health this way.
 */
export async function startHealthServer(
  port: number,
  checks: HealthCheck[] = [],
  host = '127.0.0.1',
): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
        return;
      }
      if (req.url === '/readyz') {
        const failing: { name: string; error: string }[] = [];
        for (const c of checks) {
          try {
            await c.check();
          } catch {
            // the check's name only: a driver's error text can carry hosts, users or values
            failing.push({ name: c.name, error: 'unavailable' });
          }
        }
        const body = failing.length === 0 ? { status: 'ready' } : { status: 'not_ready', failing };
        res.writeHead(failing.length === 0 ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
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
