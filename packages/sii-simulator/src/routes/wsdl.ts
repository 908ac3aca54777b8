/**
 * `GET /DTEWS/<Service>.jws?WSDL`: the SII's WSDL with its addresses pointing at this simulator,
 * so WSDL-driven SOAP clients work unchanged. The WSDL files are the project's reference copies
 * (../shared/sii/wsdl beside the repository, or SII_WSDL_DIR); 404 when they are not there.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { REAL_HOST, type SiiEnv } from '../types';

export const WSDL_SERVICES = ['CrSeed', 'GetTokenFromSeed', 'QueryEstUp', 'QueryEstDte'];

function wsdlDir(): string | undefined {
  const candidates = [
    process.env.SII_WSDL_DIR,
    path.resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'sii', 'wsdl'),
  ];
  return candidates.find((d): d is string => !!d && existsSync(d));
}

export function serveWsdl(env: SiiEnv, service: string, ctx: Context): void {
  const dir = wsdlDir();
  const file = dir ? path.join(dir, `${service}.wsdl`) : undefined;
  if (!file || !existsSync(file)) {
    ctx.status = 404;
    ctx.body = `no WSDL for ${service} (set SII_WSDL_DIR)`;
    return;
  }
  const here = `${ctx.protocol}://${ctx.host}/${env}`;
  const text = readFileSync(file, 'utf8')
    .replace(/location="https:\/\/[a-z]+\.sii\.cl/g, `location="${here}`)
    .replace(/https:\/\/maullin\.sii\.cl/g, `https://${REAL_HOST[env]}`);
  ctx.type = 'text/xml; charset=UTF-8';
  ctx.body = text;
}
