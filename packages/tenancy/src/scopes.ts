/** The API key scopes of the spec (Authentication 2). webhook:write does not include webhook:read. */
export const SCOPES = [
  'dte:read',
  'dte:write',
  'certificates:read',
  'certificates:write',
  'caf:write',
  'webhook:read',
  'webhook:write',
  'rcv:read',
  'recepcion:read',
  'recepcion:write',
  'billing:read',
] as const;

export type Scope = (typeof SCOPES)[number];

export type SiiEnv = 'cert' | 'prod';

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
