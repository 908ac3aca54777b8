import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';

/** The MCP action types with a per-minute cap (spec, Limits: MCP action caps). */
export type McpActionType = 'emit' | 'borrador' | 'reenvio';

const MAX_CAP = 10_000;

/**
 * Per connection and minute, per action type: the company's own cap (companies.mcp_rate_limits,
 * set by an owner or admin) or the service default. A company value that is not an integer
 * 1..10000 answers mcp.<type>_rate_limit_invalid; over the cap, mcp.<type>_rate_limited with
 * retry_after_seconds (the rest of the minute). Nothing is done in either case.
 */
export async function enforceMcpCap(
  db: DataSource,
  redis: Redis,
  opts: {
    connectionId: string;
    companyId: string;
    type: McpActionType;
    defaults: Record<McpActionType, number>;
  },
  now: Date,
): Promise<void> {
  const rows: { mcp_rate_limits: Record<string, unknown> | null }[] = await db.query(
    'SELECT mcp_rate_limits FROM companies WHERE id = $1',
    [opts.companyId],
  );
  const own = rows[0]?.mcp_rate_limits?.[opts.type];
  let cap = opts.defaults[opts.type];
  if (own !== undefined && own !== null) {
    if (typeof own !== 'number' || !Number.isInteger(own) || own < 1 || own > MAX_CAP) {
      throw new ApiError(
        `mcp.${opts.type}_rate_limit_invalid`,
        `The company's MCP cap for ${opts.type} (${JSON.stringify(own)}) is not an integer between 1 and ${MAX_CAP}.`,
        { detail: { action_type: opts.type, value: own } },
      );
    }
    cap = own;
  }
  const minute = Math.floor(now.getTime() / 60_000);
  const key = `mcp:cap:${opts.connectionId}:${opts.type}:${minute}`;
  const count = await redis.incr(key);
  if (count === 1) await redis.expire(key, 120);
  if (count > cap) {
    const retryAfter = Math.max(1, 60 - Math.floor((now.getTime() % 60_000) / 1000));
    throw new ApiError(
      `mcp.${opts.type}_rate_limited`,
      `This MCP connection reached its cap of ${cap} ${opts.type} actions per minute.`,
      {
        detail: {
          action_type: opts.type,
          limit: cap,
          retry_after_seconds: retryAfter,
          retryAfterSec: retryAfter,
        },
      },
    );
  }
}
