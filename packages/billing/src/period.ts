/** The month a document counts in: its emission's month in Chile's time (America/Santiago). */
const MONTH = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
});

/** `YYYY-MM` of `now` in America/Santiago. */
export function periodoOf(now: Date): string {
  const parts = MONTH.formatToParts(now);
  const y = parts.find((p) => p.type === 'year')!.value;
  const m = parts.find((p) => p.type === 'month')!.value;
  return `${y}-${m}`;
}

/** The `count` months ending with `periodo` (oldest first), e.g. 2026-01 back to 2025-08. */
export function lastPeriodos(periodo: string, count: number): string[] {
  const [y, m] = periodo.split('-').map(Number) as [number, number];
  const out: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    const idx = y * 12 + (m - 1) - i;
    out.push(`${Math.floor(idx / 12)}-${String((idx % 12) + 1).padStart(2, '0')}`);
  }
  return out;
}
