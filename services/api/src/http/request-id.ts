import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * First middleware: gives the request a fresh unique id (`req_<uuid>`) and sets X-Request-Id
 * before anything else runs, so every answer carries it — JSON, XML, PDF, ZIP, errors alike.
 * A client-sent X-Request-Id is not reused: the spec wants the id unique per request.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const id = `req_${randomUUID()}`;
    ctx.state.requestId = id;
    ctx.set(REQUEST_ID_HEADER, id);
    await next();
  };
}
