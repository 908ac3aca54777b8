import { BlockList, isIP } from 'node:net';
import type { Middleware } from 'koa';

/**
 * The client's address, as the trusted proxy reports it. Every limit keyed by address (failed
 * authentications, logins, sign-ups) and the audit log read `ctx.ip`, which this middleware sets:
 *
 * - the socket's peer when it is not one of TRUSTED_PROXIES (a client's own X-Forwarded-For is
 *   never believed: it could name anyone);
 * - behind trusted proxies, X-Forwarded-For read from the right (each proxy appends the address it
 *   received from), skipping the trusted proxies: the first address that is not one of them is the
 *   client. Without that header the peer stays the client.
 *
 * So behind an ingress every customer keeps an address of its own, instead of sharing the
 * ingress's, and no one can pose as another address by sending the header themselves.
 */
export function clientAddress(trustedProxies: readonly string[]): Middleware {
  const trusted = trustList(trustedProxies);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    ctx.request.ip = trusted ? resolveClient(peer, ctx.get('X-Forwarded-For'), trusted) : peer;
    await next();
  };
}

/** The client behind `peer` given its X-Forwarded-For header and the trusted proxies. */
export function resolveClient(peer: string, forwardedFor: string, trusted: BlockList): string {
  let client = peer;
  if (!isTrusted(trusted, client)) return client;
  const hops = forwardedFor
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isIP(hop)) return client; // garbage from beyond the proxies: stop at what is known
    client = hop;
    if (!isTrusted(trusted, hop)) return client;
  }
  return client;
}

/** The trusted proxies as a BlockList, or undefined when there are none. */
export function trustList(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [addr, bits] = entry.split('/') as [string, string | undefined];
    const type = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4) return list.check(v4, 'ipv4') || list.check(address, 'ipv6');
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
