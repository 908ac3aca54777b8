/** HTTP plumbing shared by the handlers: body reading, fault triggers, reply helpers. */
import type { Context } from 'koa';
import type { SimulatorState } from './state';
import type { Operation } from './triggers';
import type { SiiEnv } from './types';

export class BodyTooLarge extends Error {}

export async function readBody(ctx: Context, limit = 5 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge(`body larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function readJson(ctx: Context): Promise<unknown> {
  const raw = (await readBody(ctx)).toString('utf8');
  if (raw.trim() === '') return {};
  return JSON.parse(raw);
}

/**
 * Applies a pending fault trigger for this call. Returns true when the request is already
 * answered (HTTP 5xx) or dropped (socket destroyed); a delay just waits and returns false.
 */
export async function applyFault(
  ctx: Context,
  state: SimulatorState,
  env: SiiEnv | undefined,
  op: Operation,
): Promise<boolean> {
  const fault = state.triggers.takeFault(env, op);
  if (!fault) return false;
  if (fault.kind === 'delay') {
    await new Promise((r) => setTimeout(r, fault.ms));
    return false;
  }
  if (fault.kind === 'drop') {
    ctx.respond = false;
    ctx.req.socket.destroy();
    return true;
  }
  ctx.status = fault.status ?? 500;
  ctx.type = 'text/html';
  ctx.body = `Error ${ctx.status}`;
  return true;
}

export function xmlReply(ctx: Context, xml: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/xml; charset=UTF-8';
  ctx.body = xml;
}

export function jsonError(ctx: Context, status: number, error: string, message: string): void {
  ctx.status = status;
  ctx.body = { error, message };
}

/** Cookie `TOKEN=…` as the SII's upload, register and RCV services take it. */
export function cookieToken(ctx: Context): string | undefined {
  const header = ctx.get('cookie');
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === 'TOKEN') return v.join('=');
  }
  return undefined;
}
