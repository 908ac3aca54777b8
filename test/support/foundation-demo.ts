/** A value of schemas/avro/foundation-demo.avsc, the schema the messaging foundation tests send. */
export interface FoundationDemo {
  id: string;
  amount: number;
  kind: 'CREATED' | 'SIGNED';
  note: string | null;
  observed_at: Date;
}

/** The i-th demo record the messaging foundation tests send (id `doc-<i>`). */
export const demo = (i: number): FoundationDemo => ({
  id: `doc-${i}`,
  amount: i,
  kind: 'CREATED',
  note: null,
  observed_at: new Date(1763780000000 + i),
});

/** Resolves once `cond()` holds, checking every 50 ms; throws after `ms`. */
export async function until(cond: () => boolean, ms = 30000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
