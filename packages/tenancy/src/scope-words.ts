import type { Scope } from './scopes';

/**
 * Each scope in a taxpayer's words (es-CL), the one table the dashboard shows (its API keys form
 * and the agents' grants, embedded in every page): `empresas:read` exists only in agents' OAuth
 * grants.
 */
export const SCOPE_WORDS: Record<Scope | 'empresas:read', string> = {
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
