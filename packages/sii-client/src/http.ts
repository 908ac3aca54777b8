/**
 * One HTTP exchange with the SII over node:http(s), so that headers (Cookie, the User-Agent quirk,
 * an explicit Content-Length) go out exactly as given. Every exchange has a deadline and may be
 * cancelled by the caller's AbortSignal; network failures become transient SiiErrors that say
 * whether the request had been completely sent (the SII may then have processed it).
 */
import http from 'node:http';
import https from 'node:https';

import { metrics } from '@dte/service-runtime';

import { SiiError } from './errors';

export interface HttpExchange {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer;
  /** whole exchange: connect, send, wait and read */
  timeoutMs: number;
  signal?: AbortSignal;
  /** name of the call, for errors */
  operation: string;
  /** replies longer than this are refused (protocol error) */
  maxResponseBytes?: number;
}

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** One exchange, timed in dte_sii_request_duration_seconds{operation,outcome}. */
export function sendHttp(x: HttpExchange): Promise<HttpReply> {
  const t0 = process.hrtime.bigint();
  const observe = (outcome: string) =>
    metrics.siiRequestDuration.observe(
      { operation: x.operation, outcome },
      Number(process.hrtime.bigint() - t0) / 1e9,
    );
  return exchange(x).then(
    (reply) => {
      observe(reply.status >= 200 && reply.status < 300 ? 'ok' : `http_${Math.floor(reply.status / 100)}xx`);
      return reply;
    },
    (err: unknown) => {
      observe(err instanceof SiiError ? err.kind : 'error');
      throw err;
    },
  );
}

function exchange(x: HttpExchange): Promise<HttpReply> {
  return new Promise<HttpReply>((resolve, reject) => {
    const url = new URL(x.url);
    const transport = url.protocol === 'https:' ? https : http;
    const limit = x.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    let settled = false;
    let requestSent = false;

    const fail = (err: SiiError): void => {
      if (settled) return;
      settled = true;
      cleanup();
      req.destroy();
      reject(err);
    };
    const transient = (message: string, cause?: unknown): SiiError =>
      new SiiError('transient', `${x.operation}: ${message}`, {
        operation: x.operation,
        requestSent,
        ...(cause === undefined ? {} : { cause }),
      });

    const req = transport.request(url, { method: x.method, headers: x.headers });

    const timer = setTimeout(
      () => fail(transient(`no complete answer within ${x.timeoutMs} ms (timeout)`)),
      x.timeoutMs,
    );
    const onAbort = (): void => fail(transient('aborted by the caller', x.signal?.reason));
    const cleanup = (): void => {
      clearTimeout(timer);
      x.signal?.removeEventListener('abort', onAbort);
    };
    if (x.signal?.aborted) {
      settled = true;
      cleanup();
      reject(transient('aborted by the caller', x.signal.reason));
      return;
    }
    x.signal?.addEventListener('abort', onAbort, { once: true });

    req.on('finish', () => {
      requestSent = true;
    });
    req.on('error', (err) => fail(transient(`connection failed (${describe(err)})`, err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          fail(
            new SiiError('protocol', `${x.operation}: reply larger than ${limit} bytes`, {
              operation: x.operation,
              httpStatus: res.statusCode,
              requestSent,
            }),
          );
          return;
        }
        chunks.push(chunk);
      });
      res.on('aborted', () => fail(transient('connection closed in the middle of the reply')));
      res.on('error', (err) => fail(transient(`reply interrupted (${describe(err)})`, err)));
      res.on('end', () => {
        if (settled) return;
        if (!res.complete) {
          fail(transient('connection closed in the middle of the reply'));
          return;
        }
        settled = true;
        cleanup();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });

    req.end(x.body);
  });
}

function describe(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `${code}: ${err.message}` : err.message;
}
