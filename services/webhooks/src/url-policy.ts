import dns from 'node:dns/promises';
import net from 'node:net';
import { ServiceError } from '@dte/error-catalog';

/**
 * Which webhook URLs the service may call (spec: "The URL must be public https. Localhost,
 * private ranges, cloud metadata addresses and custom ports are rejected with 422
 * invalid_webhook_url; the check repeats at every delivery").
 *
 * The check runs twice: on the URL text when a subscription is registered, and at every
 * delivery on the addresses the host name resolves to at that moment. The delivery then
 * connects to exactly the address that passed (see http-delivery.ts), so a name that is
 * re-pointed at a private address between the check and the connection (DNS rebinding) gets
 * nowhere.
 *
 * `allowLoopback` is the test-only setting (see config.ts for the rule that keeps it out of
 * production): it lets a receiver on 127.0.0.0/8 or ::1 on any port be used; everything else
 * stays refused even then.
 */
export interface UrlPolicy {
  allowLoopback: boolean;
}

export const PRODUCTION_URL_POLICY: UrlPolicy = Object.freeze({ allowLoopback: false });

export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address the system resolver gives (what a connect would use). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** How long one name may take to resolve (c-ares, one try per server) before the attempt fails. */
export const WEBHOOK_DNS_TIMEOUT_MS = 2000;

/**
 * A resolver on c-ares (`dns.Resolver`, asynchronous and with a timeout) rather than
 * `dns.lookup`, which runs getaddrinfo on libuv's small thread pool with no time limit: a few
 * endpoints behind a slow name server would hold every pool thread and stall DNS, file and
 * crypto work for every organization. `servers` (host:port) defaults to the system's.
 * `localhost` is answered without a query (it is in no name server).
 */
export function timedResolver(timeoutMs = WEBHOOK_DNS_TIMEOUT_MS, servers?: string[]): Resolver {
  const r = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers) r.setServers(servers);
  return async (hostname) => {
    if (hostname === 'localhost') {
      const all = await dns.lookup(hostname, { all: true, verbatim: true });
      return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    }
    const settle = <T>(p: Promise<T>) =>
      p.then(
        (v) => ({ ok: true as const, v }),
        (e: unknown) => ({ ok: false as const, e }),
      );
    const [v4, v6] = await Promise.all([settle(r.resolve4(hostname)), settle(r.resolve6(hostname))]);
    const out: ResolvedAddress[] = [
      ...(v4.ok ? v4.v.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.ok ? v6.v.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (out.length === 0) throw (v4.ok ? (v6.ok ? new Error('no address') : v6.e) : v4.e) as Error;
    return out;
  };
}

export const systemResolver: Resolver = timedResolver();

export interface ParsedWebhookUrl {
  url: URL;
  /** host name or IP literal, without IPv6 brackets */
  hostname: string;
  port: number;
  /** true when the URL names a port other than 443 */
  customPort: boolean;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

function refuse(reason: string, message: string, extra: Record<string, unknown> = {}): never {
  throw new ServiceError('invalid_webhook_url', message, { detail: { reason, ...extra } });
}

type Rule = [list: net.BlockList, category: AddressCategory];

function rules(family: 'ipv4' | 'ipv6', entries: [string, number, AddressCategory][]): Rule[] {
  return entries.map(([net0, prefix, category]) => {
    const list = new net.BlockList();
    list.addSubnet(net0, prefix, family);
    return [list, category];
  });
}

// Order matters: the first match wins (the metadata host sits inside link-local).
const V4_RULES = rules('ipv4', [
  ['169.254.169.254', 32, 'metadata'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]);

const V6_RULES = rules('ipv6', [
  ['fd00:ec2::254', 128, 'metadata'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'private'],
  ['100::', 64, 'reserved'],
  ['2001::', 32, 'reserved'],
  ['2001:2::', 48, 'reserved'],
  ['2001:10::', 28, 'reserved'],
  ['2001:20::', 28, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['3fff::', 20, 'reserved'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
]);

const GLOBAL_UNICAST_V6 = new net.BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (zone already removed). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    tail.push((parts[0]! << 8) | parts[1]!, (parts[2]! << 8) | parts[3]!);
    text = text.slice(0, -dotted[1]!.length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const missing = 8 - tail.length - left.length - right.length;
  return [...left, ...new Array<number>(rest === undefined ? 0 : missing).fill(0), ...right, ...tail];
}

function v4FromGroups(hi: number, lo: number): string {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4), if any. */
function embeddedV4(address: string): string | null {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4FromGroups(g[6]!, g[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 6) && !(g[6] === 0 && g[7]! <= 1)) return v4FromGroups(g[6]!, g[7]!); // ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4FromGroups(g[6]!, g[7]!); // 64:ff9b::/96
  if (g[0] === 0x2002) return v4FromGroups(g[1]!, g[2]!); // 6to4
  return null;
}

/** classifications made, by address text (a pure function of it; each attempt checks its address twice) */
const classified = new Map<string, AddressCategory>();
const CLASSIFIED_MAX = 4096;

/** What kind of address this is; only `public` is a valid webhook target in production. */
export function classifyAddress(raw: string): AddressCategory {
  let category = classified.get(raw);
  if (category === undefined) {
    category = classifyAddressText(raw);
    if (classified.size >= CLASSIFIED_MAX) classified.clear();
    classified.set(raw, category);
  }
  return category;
}

function classifyAddressText(raw: string): AddressCategory {
  const address = raw.replace(/^\[|\]$/g, '');
  if (address.includes('%')) return 'link_local'; // zoned addresses are link-scoped by definition
  const family = net.isIP(address);
  if (family === 4) {
    for (const [list, category] of V4_RULES) if (list.check(address, 'ipv4')) return category;
    return 'public';
  }
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4 !== null) {
      const inner = classifyAddress(v4);
      return inner === 'public' ? 'public' : inner;
    }
    for (const [list, category] of V6_RULES) if (list.check(address, 'ipv6')) return category;
    return GLOBAL_UNICAST_V6.check(address, 'ipv6') ? 'public' : 'reserved';
  }
  throw new Error(`not an IP address: ${raw}`);
}

function isAllowed(category: AddressCategory, policy: UrlPolicy): boolean {
  return category === 'public' || (category === 'loopback' && policy.allowLoopback);
}

/**
 * The registration-time check of the URL text: https, no credentials, default port (unless
 * the test-only loopback setting is on), and when the host is an IP literal or a localhost
 * name, an allowed address.
 */
export function parseWebhookUrl(raw: unknown, policy: UrlPolicy): ParsedWebhookUrl {
  if (typeof raw !== 'string' || raw.length === 0) refuse('not_a_url', 'url must be a non-empty string');
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    refuse('too_long', `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse('not_a_url', 'url is not an absolute URL');
  }
  if (url.protocol !== 'https:') refuse('not_https', 'url must use https');
  if (url.username !== '' || url.password !== '') refuse('credentials', 'url must not carry credentials');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (hostname === '') refuse('no_host', 'url has no host');
  const customPort = url.port !== '';
  if (customPort && !policy.allowLoopback) refuse('custom_port', 'url must use the default https port');
  if (net.isIP(hostname)) {
    const category = classifyAddress(hostname);
    if (!isAllowed(category, policy)) refuse(category, `url points at a ${category} address`);
    if (customPort && category !== 'loopback') refuse('custom_port', 'url must use the default https port');
  } else if (/(^|\.)localhost\.?$/i.test(hostname) && !policy.allowLoopback) {
    refuse('loopback', 'url points at localhost');
  }
  return { url, hostname, port: customPort ? Number(url.port) : 443, customPort };
}

/**
 * The check that runs right before every connection: resolves the host now and requires every
 * address it resolves to to be allowed (a name with one private address among public ones is
 * refused). Returns the one address the caller must connect to.
 */
export async function resolveWebhookTarget(
  parsed: ParsedWebhookUrl,
  policy: UrlPolicy,
  resolver: Resolver = systemResolver,
): Promise<ResolvedAddress> {
  let addresses: ResolvedAddress[];
  if (net.isIP(parsed.hostname)) {
    addresses = [{ address: parsed.hostname, family: net.isIP(parsed.hostname) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolver(parsed.hostname);
    } catch (err) {
      refuse('unresolvable', `host ${parsed.hostname} does not resolve`, {
        error: (err as NodeJS.ErrnoException).code ?? 'ERROR',
      });
    }
    if (addresses.length === 0) refuse('unresolvable', `host ${parsed.hostname} does not resolve`);
  }
  for (const a of addresses) {
    const category = classifyAddress(a.address);
    if (!isAllowed(category, policy))
      refuse(category, `url host resolves to a ${category} address`, { address: a.address });
    if (parsed.customPort && category !== 'loopback')
      refuse('custom_port', 'url must use the default https port');
  }
  return addresses[0]!;
}

/** Both checks: the URL text, then the addresses it resolves to now. */
export async function checkWebhookUrl(
  raw: unknown,
  policy: UrlPolicy,
  resolver: Resolver = systemResolver,
): Promise<{ parsed: ParsedWebhookUrl; target: ResolvedAddress }> {
  const parsed = parseWebhookUrl(raw, policy);
  const target = await resolveWebhookTarget(parsed, policy, resolver);
  return { parsed, target };
}
