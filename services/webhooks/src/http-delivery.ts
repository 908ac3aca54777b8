import crypto from 'node:crypto';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isServiceError } from '@dte/error-catalog';
import { parseWebhookUrl, resolveWebhookTarget, type Resolver, type UrlPolicy } from './url-policy';

export const USER_AGENT = 'Service-Webhooks/1.0';

/** After the status: how long and how much of a body is drained to keep the connection alive. */
export const RESPONSE_DRAIN_MS = 100;
export const RESPONSE_DRAIN_MAX_BYTES = 64 * 1024;

export interface PostOptions {
  policy: UrlPolicy;
  timeoutMs: number;
  resolver?: Resolver;
  /** trusted CAs; undefined = the system's roots (the test CA comes only from test config) */
  ca?: string[];
}

export interface PostResult {
  ok: boolean;
  /** HTTP status when the endpoint answered */
  status?: number;
  /** why the attempt failed without a usable answer (invalid_webhook_url:<reason>, timeout, network code) */
  error?: string;
  /** the address that was checked and connected to */
  address?: string;
  durationMs: number;
}

/**
 * Keep-alive agents, one per (host name, checked address, port, CA set): a reused connection is
 * always one that was opened to the very address checked for this attempt, so reuse never lets a
 * re-pointed name through. Bounded; the least recently used agent is closed first.
 */
const MAX_AGENTS = 500;
const agents = new Map<string, https.Agent>();

function agentFor(hostname: string, address: string, port: number, ca: string[] | undefined): https.Agent {
  const trust = ca ? crypto.createHash('sha256').update(ca.join('\n')).digest('hex') : 'system';
  const key = `${hostname}|${address}|${port}|${trust}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  agent = new https.Agent({
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: 8,
    maxFreeSockets: 4,
    timeout: 30_000,
    ...(ca ? { ca } : {}),
  });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, https.Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

/** Closes every pooled connection (service shutdown, tests). */
export function closeDeliveryAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

/** Hands the connection exactly the address that was checked, whatever DNS says by now. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * One delivery attempt: checks the URL and the address it resolves to now, connects to that
 * address only (TLS still verifies the certificate against the host name), POSTs the body,
 * never follows a redirect, and gives up after `timeoutMs` (DNS, connection and answer together,
 * one deadline). The attempt ends with the status; the body is discarded (drained for at most
 * RESPONSE_DRAIN_MS / RESPONSE_DRAIN_MAX_BYTES to reuse the connection, else the socket is closed).
 * Any 2xx is success; every other outcome is a failure with its reason.
 */
export async function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<PostResult> {
  const started = Date.now();
  let target;
  let parsed;
  let dnsTimer: NodeJS.Timeout | undefined;
  try {
    parsed = parseWebhookUrl(rawUrl, opts.policy);
    // DNS counts against the attempt's one deadline (connect and answer get what is left)
    const timedOut = new Promise<'timeout'>((resolve) => {
      dnsTimer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
    });
    const resolved = await Promise.race([resolveWebhookTarget(parsed, opts.policy, opts.resolver), timedOut]);
    if (resolved === 'timeout') return { ok: false, error: 'timeout', durationMs: Date.now() - started };
    target = resolved;
  } catch (err) {
    if (!isServiceError(err)) throw err;
    const reason = String(err.detail?.reason ?? 'invalid');
    return { ok: false, error: `invalid_webhook_url:${reason}`, durationMs: Date.now() - started };
  } finally {
    clearTimeout(dnsTimer);
  }
  const remainingMs = Math.max(1, opts.timeoutMs - (Date.now() - started));
  const { url } = parsed;
  const payload = Buffer.from(body, 'utf8');
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<PostResult, 'durationMs' | 'address'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, address: target.address, durationMs: Date.now() - started });
    };
    const req = https.request({
      method: 'POST',
      protocol: 'https:',
      hostname: parsed.hostname,
      port: parsed.port,
      path: `${url.pathname}${url.search}`,
      headers: {
        ...headers,
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'Content-Length': String(payload.length),
      },
      agent: agentFor(parsed.hostname, target.address, parsed.port, opts.ca),
      lookup: pinnedLookup(target.address, target.family),
    });
    const timer = setTimeout(() => {
      finish({ ok: false, error: 'timeout' });
      req.destroy(new Error('timeout'));
    }, remainingMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.on('error', () => undefined);
      // the status is all we need: the body is discarded, and the socket closed unless the body
      // ends within RESPONSE_DRAIN_MS and RESPONSE_DRAIN_MAX_BYTES (then the connection is reused);
      // an endpoint that trickles an endless body holds nothing of ours
      let bytes = 0;
      const drain = setTimeout(() => res.destroy(), RESPONSE_DRAIN_MS);
      drain.unref();
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes > RESPONSE_DRAIN_MAX_BYTES) res.destroy();
      });
      res.on('close', () => clearTimeout(drain));
      finish(
        status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `http_${status}` },
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: err.code ?? err.message }));
    req.end(payload);
  });
}
