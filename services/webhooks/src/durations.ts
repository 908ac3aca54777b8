const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "10s", "1m", "2h", "90d" or a bare number of milliseconds */
export function parseDuration(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  if (!m) throw new Error(`expected a duration such as 500ms, 10s, 1m, 2h or 90d, got "${raw}"`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}

export function parseDurationList(raw: string): number[] {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseDuration);
  if (list.length === 0) throw new Error('expected at least one duration');
  return list;
}
