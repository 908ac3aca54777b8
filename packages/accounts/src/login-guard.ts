import type { Redis } from 'ioredis';
import { ServiceError } from '@dte/error-catalog';

/**
 * Brute-force and burst protection of the login and the sign-up, in Redis (shared by every api
 * replica); each refusal is 429 rate_limit with detail.retryAfterSec (and Retry-After):
 * - per account: `maxFailures` wrong passwords in a row lock the e-mail for `lockSec` (even with
 *   the right password); a success clears the count;
 * - logins per client address: at most `perIpPerMinute` a minute, whatever the e-mail, and
 *   `globalPerMinute` in all;
 * - sign-ups per client address: at most `signupPerIpPerHour` an hour, and `signupGlobalPerMinute`
 *   in all (each runs a 128 MiB scrypt: password.ts also bounds how many run at once).
 * Refused attempts are counted too, so hammering does not reopen the window.
 */
export interface LoginGuardOptions {
  maxFailures: number;
  lockSec: number;
  perIpPerMinute: number;
  globalPerMinute: number;
  signupPerIpPerHour: number;
  signupGlobalPerMinute: number;
}

export const DEFAULT_LOGIN_GUARD: LoginGuardOptions = {
  maxFailures: 5,
  lockSec: 15 * 60,
  perIpPerMinute: 30,
  globalPerMinute: 600,
  signupPerIpPerHour: 10,
  signupGlobalPerMinute: 60,
};

/** Whole seconds (at least 1) until the fixed window of `sec` seconds that holds `now` ends. */
const untilWindowEnd = (now: Date, sec: number) =>
  Math.max(1, Math.ceil(sec - ((now.getTime() / 1000) % sec)));

const norm = (email: string) => email.trim().toLowerCase();

export class LoginGuard {
  constructor(
    private readonly redis: Redis,
    readonly opts: LoginGuardOptions = DEFAULT_LOGIN_GUARD,
  ) {}

  /** Throws rate_limit when the address is over its rate or the account is locked. */
  async check(email: string, ip: string, now: Date): Promise<void> {
    const minute = Math.floor(now.getTime() / 60000);
    const ipKey = `login-ip:${ip}:${minute}`;
    const allKey = `login-all:${minute}`;
    const res = await this.redis
      .multi()
      .incr(ipKey)
      .expire(ipKey, 61)
      .get(`login-lock:${norm(email)}`)
      .incr(allKey)
      .expire(allKey, 61)
      .exec();
    const count = Number(res?.[0]?.[1] ?? 0);
    if (count > this.opts.perIpPerMinute) {
      throw new ServiceError('rate_limit', 'Demasiados intentos de inicio de sesión desde esta dirección.', {
        detail: { retryAfterSec: untilWindowEnd(now, 60) },
      });
    }
    if (Number(res?.[3]?.[1] ?? 0) > this.opts.globalPerMinute) {
      throw new ServiceError(
        'rate_limit',
        'Demasiados inicios de sesión en este momento; reintenta en un minuto.',
        {
          detail: { retryAfterSec: untilWindowEnd(now, 60) },
        },
      );
    }
    const lockedUntil = Number(res?.[2]?.[1] ?? 0);
    if (lockedUntil > now.getTime()) {
      throw new ServiceError('rate_limit', 'Cuenta bloqueada temporalmente por intentos fallidos.', {
        detail: { retryAfterSec: Math.ceil((lockedUntil - now.getTime()) / 1000), locked: true },
      });
    }
  }

  /** Throws rate_limit when the address, or everyone together, signed up too often lately. */
  async checkSignup(ip: string, now: Date): Promise<void> {
    const hourKey = `signup-ip:${ip}:${Math.floor(now.getTime() / 3_600_000)}`;
    const allKey = `signup-all:${Math.floor(now.getTime() / 60_000)}`;
    const res = await this.redis
      .multi()
      .incr(hourKey)
      .expire(hourKey, 3601)
      .incr(allKey)
      .expire(allKey, 61)
      .exec();
    if (Number(res?.[0]?.[1] ?? 0) > this.opts.signupPerIpPerHour) {
      throw new ServiceError(
        'rate_limit',
        'Demasiadas cuentas creadas desde esta dirección; reintenta más tarde.',
        {
          detail: { retryAfterSec: untilWindowEnd(now, 3600) },
        },
      );
    }
    if (Number(res?.[2]?.[1] ?? 0) > this.opts.signupGlobalPerMinute) {
      throw new ServiceError(
        'rate_limit',
        'Demasiadas cuentas creadas en este momento; reintenta en un minuto.',
        {
          detail: { retryAfterSec: untilWindowEnd(now, 60) },
        },
      );
    }
  }

  /** Counts a wrong password; answers true when this failure locked the account. */
  async failed(email: string, now: Date): Promise<boolean> {
    const key = `login-fail:${norm(email)}`;
    const res = await this.redis.multi().incr(key).expire(key, this.opts.lockSec).exec();
    const n = Number(res?.[0]?.[1] ?? 0);
    if (n >= this.opts.maxFailures) {
      const until = now.getTime() + this.opts.lockSec * 1000;
      await this.redis
        .multi()
        .set(`login-lock:${norm(email)}`, String(until), 'EX', this.opts.lockSec)
        .del(key)
        .exec();
      return true;
    }
    return false;
  }

  async succeeded(email: string): Promise<void> {
    await this.redis.del(`login-fail:${norm(email)}`);
  }
}
