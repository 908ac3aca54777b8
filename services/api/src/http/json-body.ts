import type { Context } from 'koa';
import { ApiError } from '@dte/error-catalog';

export const MAX_JSON_BYTES = 1024 * 1024;

export async function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new ApiError('validation_failed', `Body larger than ${limit} bytes.`, {
        issues: [{ path: '', message: `body must be at most ${limit} bytes` }],
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads a JSON body: keeps the raw bytes in ctx.state.rawBody (idempotency hashes them) and the
 * parsed value in ctx.state.body. A body that is not JSON, or not sent as JSON, is invalid_json.
 */
export async function parseJsonBody(ctx: Context): Promise<unknown> {
  const raw = await readRaw(ctx, MAX_JSON_BYTES);
  ctx.state.rawBody = raw;
  if (raw.length === 0) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new ApiError('invalid_json', 'The body must be JSON sent with Content-Type: application/json.');
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
}
