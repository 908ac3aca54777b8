import type { Redis } from 'ioredis';
import { ServiceError } from '@dte/error-catalog';

/**
 * Brute-force protection of the login, in Redis (shared by every api replica):
 * - per account: `maxFailures` wrong passwords in a row lock the e-mail for `lockSec` (429
 *   rate_limit with retryAfterSec, even with the right password); a success clears the count;
 * - per client address: at most `perIpPerMinute` attempts a minute, whatever the e-mail.
 */
export interface LoginGuardOptions {
  maxFailures: number;
  lockSec: number;
  perIpPerMinute: number;
}

export const DEFAULT_LOGIN_GUARD: LoginGuardOptions = {
  maxFailures: 5,
  lockSec: 15 * 60,
  perIpPerMinute: 30,
};

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
    const res = await this.redis
      .multi()
      .incr(ipKey)
      .expire(ipKey, 61)
      .get(`login-lock:${norm(email)}`)
      .exec();
    const count = Number(res?.[0]?.[1] ?? 0);
    if (count > this.opts.perIpPerMinute) {
      throw new ServiceError('rate_limit', 'Demasiados intentos de inicio de sesión desde esta dirección.', {
        detail: { retryAfterSec: Math.max(1, 60 - Math.floor((now.getTime() / 1000) % 60)) },
      });
    }
    const lockedUntil = Number(res?.[2]?.[1] ?? 0);
    if (lockedUntil > now.getTime()) {
      throw new ServiceError('rate_limit', 'Cuenta bloqueada temporalmente por intentos fallidos.', {
        detail: { retryAfterSec: Math.ceil((lockedUntil - now.getTime()) / 1000), locked: true },
      });
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
