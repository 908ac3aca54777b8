/**
 * Exact decimal arithmetic for amounts. Quantities and prices carry up to 6 decimals and their
 * products reach 10^18, beyond what a double holds exactly, so every amount is computed as a
 * scaled BigInt and rounded only where the SII format asks for a rounded value.
 */

export class Decimal {
  /** value = units / 10^scale */
  constructor(
    readonly units: bigint,
    readonly scale: number,
  ) {}

  static of(value: number | string | bigint): Decimal {
    if (typeof value === 'bigint') return new Decimal(value, 0);
    const text = typeof value === 'number' ? numberToPlain(value) : value.trim();
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!m) throw new TypeError(`not a decimal number: ${text}`);
    const frac = m[3] ?? '';
    const units = BigInt(m[2] + frac);
    return new Decimal(m[1] === '-' ? -units : units, frac.length);
  }

  private rescale(scale: number): bigint {
    return this.units * 10n ** BigInt(scale - this.scale);
  }

  add(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return new Decimal(this.rescale(scale) + other.rescale(scale), scale);
  }

  sub(other: Decimal): Decimal {
    return this.add(other.neg());
  }

  neg(): Decimal {
    return new Decimal(-this.units, this.scale);
  }

  mul(other: Decimal): Decimal {
    return new Decimal(this.units * other.units, this.scale + other.scale);
  }

  /** this / 10^n, exact */
  shift(n: number): Decimal {
    return new Decimal(this.units, this.scale + n);
  }

  /**
   * Rounds to `places` decimals, half away from zero (0.5 -> 1, -0.5 -> -1): the rounding of the
   * SII's own examples and of PHP's round(), which the reference implementations use.
   */
  round(places = 0): Decimal {
    if (this.scale <= places) return new Decimal(this.rescale(places), places);
    const factor = 10n ** BigInt(this.scale - places);
    const negative = this.units < 0n;
    const abs = negative ? -this.units : this.units;
    let q = abs / factor;
    if ((abs % factor) * 2n >= factor) q += 1n;
    return new Decimal(negative ? -q : q, places);
  }

  cmp(other: Decimal): number {
    const scale = Math.max(this.scale, other.scale);
    const a = this.rescale(scale);
    const b = other.rescale(scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  eq(other: Decimal): boolean {
    return this.cmp(other) === 0;
  }

  isZero(): boolean {
    return this.units === 0n;
  }

  isNegative(): boolean {
    return this.units < 0n;
  }

  toString(): string {
    const negative = this.units < 0n;
    let digits = (negative ? -this.units : this.units).toString();
    if (this.scale > 0) {
      digits = digits.padStart(this.scale + 1, '0');
      const int = digits.slice(0, digits.length - this.scale);
      const frac = digits.slice(digits.length - this.scale).replace(/0+$/, '');
      digits = frac ? `${int}.${frac}` : int;
    }
    return negative && digits !== '0' ? `-${digits}` : digits;
  }

  toNumber(): number {
    return Number(this.toString());
  }

  /**
   * True when toNumber() gives this value back exactly: integers up to 2^53 - 1, or at most 15
   * significant digits (a double keeps 15 decimal digits through a round trip).
   */
  isExactAsNumber(): boolean {
    const abs = this.units < 0n ? -this.units : this.units;
    if (this.scale === 0) return abs <= BigInt(Number.MAX_SAFE_INTEGER);
    return abs.toString().replace(/^0+/, '').length <= 15;
  }
}

/** Number of decimals a JSON number was written with (its shortest round-trip form). */
export function decimalPlaces(value: number): number {
  const text = numberToPlain(value);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** The shortest decimal text of a finite number, without exponent notation. */
function numberToPlain(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  const text = String(value);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!m) return text;
  const digits = m[2] + (m[3] ?? '');
  const exp = Number(m[4]);
  const pointAt = 1 + exp;
  let plain: string;
  if (pointAt <= 0) plain = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) plain = digits + '0'.repeat(pointAt - digits.length);
  else plain = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return m[1] + plain;
}
