// @ts-check
// The scopes (of API keys and of agents' OAuth grants) in words: the one table the pages use.

/** @type {Record<string, string>} */
export const PERMISOS = {
  'dte:read': 'Ver documentos',
  'dte:write': 'Emitir documentos',
  'certificates:read': 'Ver certificados',
  'certificates:write': 'Subir certificados',
  'caf:write': 'Administrar folios',
  'webhook:read': 'Ver webhooks',
  'webhook:write': 'Administrar webhooks',
  'rcv:read': 'Ver el registro de compras y ventas',
  'recepcion:read': 'Ver facturas recibidas',
  'recepcion:write': 'Proponer acuse o reclamo de facturas recibidas',
  'billing:read': 'Ver plan y consumo',
  'empresas:read': 'Ver la empresa',
};

/**
 * The scopes an API key may have (spec, Authentication 2; packages/tenancy/src/scopes.ts), in the
 * form's order; `checked` marks the form's default.
 * @type {{ scope: string, checked: boolean }[]}
 */
export const PERMISOS_API_KEY = [
  { scope: 'dte:read', checked: true },
  { scope: 'dte:write', checked: true },
  { scope: 'certificates:read', checked: true },
  { scope: 'certificates:write', checked: true },
  { scope: 'caf:write', checked: true },
  { scope: 'webhook:read', checked: true },
  { scope: 'webhook:write', checked: true },
  { scope: 'rcv:read', checked: false },
  { scope: 'recepcion:read', checked: false },
  { scope: 'recepcion:write', checked: false },
  { scope: 'billing:read', checked: false },
];

/**
 * A scope in words: "Ver documentos" (the scope itself when unknown).
 * @param {string} scope
 */
export const permiso = (scope) => PERMISOS[scope] || scope;
