/**
 * Reading configuration from environment variables, checked in one place per service.
 * A service declares what it reads; `readConfig` returns typed values or throws one error
 * listing every variable that is missing or malformed, so a misconfigured process dies at
 * start-up with a message that says what to fix.
 */
export type EnvSpec<T> = {
  [K in keyof T]: {
    env: string;
    default?: T[K];
    parse?: (raw: string) => T[K];
    /** when true, a value must be present (from env or default) */
    required?: boolean;
  };
};

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function readConfig<T extends object>(spec: EnvSpec<T>, env: NodeJS.ProcessEnv = process.env): T {
  const out: Partial<T> = {};
  const problems: string[] = [];
  for (const key of Object.keys(spec) as (keyof T)[]) {
    const item = spec[key];
    const raw = env[item.env];
    if (raw === undefined || raw === '') {
      if (item.default !== undefined) out[key] = item.default;
      else if (item.required !== false) problems.push(`${item.env} is required`);
      continue;
    }
    try {
      out[key] = item.parse ? item.parse(raw) : (raw as unknown as T[typeof key]);
    } catch (err) {
      problems.push(`${item.env}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as T;
}

export const parse = {
  int(raw: string): number {
    if (!/^-?\d+$/.test(raw)) throw new Error(`expected an integer, got "${raw}"`);
    return Number(raw);
  },
  /** an integer > 0 */
  positiveInt(raw: string): number {
    const n = parse.int(raw);
    if (n <= 0) throw new Error(`expected a positive integer, got ${n}`);
    return n;
  },
  /** an integer >= 0 */
  nonNegativeInt(raw: string): number {
    const n = parse.int(raw);
    if (n < 0) throw new Error(`expected an integer >= 0, got ${n}`);
    return n;
  },
  port(raw: string): number {
    const n = parse.int(raw);
    if (n < 0 || n > 65535) throw new Error(`expected a port 0-65535, got ${n}`);
    return n;
  },
  bool(raw: string): boolean {
    if (/^(1|true|yes)$/i.test(raw)) return true;
    if (/^(0|false|no)$/i.test(raw)) return false;
    throw new Error(`expected true or false, got "${raw}"`);
  },
  list(raw: string): string[] {
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  },
  oneOf<V extends string>(...values: V[]) {
    return (raw: string): V => {
      if (!(values as string[]).includes(raw))
        throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
      return raw as V;
    };
  },
};
