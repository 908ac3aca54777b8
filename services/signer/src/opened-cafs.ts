/**
 * Opened CAFs kept in memory by the signer process, as StoredCredentials keeps opened
 * certificates: each CAF's row is read, its private key unsealed and parsed (the engine keeps the
 * parsed key with the Caf object) once per `ttlMs` (5 min) instead of once per batch. At most
 * `max` entries; an entry that expires or is evicted has its key text wiped. A CAF that cannot be
 * opened is not kept (the next batch tries again).
 */
import type { Caf } from '@dte/engine';

export class OpenedCafs {
  private readonly entries = new Map<string, { caf: Promise<Caf>; until: number }>();

  constructor(private readonly opts: { ttlMs?: number; max?: number; now?: () => number } = {}) {}

  /** The CAF `id`, opened by `open` when not kept (or expired). */
  get(id: string, open: () => Promise<Caf>): Promise<Caf> {
    const now = (this.opts.now ?? Date.now)();
    const kept = this.entries.get(id);
    if (kept && kept.until > now) return kept.caf;
    if (kept) this.forget(id);
    const caf = open();
    this.entries.set(id, { caf, until: now + (this.opts.ttlMs ?? 5 * 60_000) });
    caf.catch(() => {
      if (this.entries.get(id)?.caf === caf) this.entries.delete(id);
    });
    const max = this.opts.max ?? 200;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.forget(oldest);
    }
    return caf;
  }

  private forget(id: string): void {
    const e = this.entries.get(id);
    this.entries.delete(id);
    e?.caf.then((c) => (c.rsaPrivateKeyPem = '')).catch(() => undefined);
  }
}
