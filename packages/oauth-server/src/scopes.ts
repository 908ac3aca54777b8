/**
 * The OAuth scopes of the remote MCP server (spec, Authentication item 5), with the text the
 * consent page shows for each (Spanish, Chile).
 */
export const OAUTH_SCOPES = [
  'dte:read',
  'rcv:read',
  'empresas:read',
  'certificates:read',
  'billing:read',
  'recepcion:read',
  'dte:write',
  'recepcion:write',
] as const;

export type OAuthScope = (typeof OAUTH_SCOPES)[number];

export function isOAuthScope(s: string): s is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(s);
}

export const SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  'dte:read': 'Ver los documentos emitidos y recibidos, su estado ante el SII y sus eventos',
  'rcv:read': 'Ver el Registro de Compras y Ventas sincronizado',
  'empresas:read': 'Ver los datos de la empresa, sus contrapartes y el avance de certificación',
  'certificates:read': 'Ver los datos de los certificados digitales (nunca el archivo .p12 ni su clave)',
  'billing:read': 'Ver el plan, el consumo mensual y los pagos',
  'recepcion:read': 'Ver la bandeja de facturas de proveedores con su plazo legal',
  'dte:write':
    'Emitir facturas, notas de crédito, notas de débito y guías de despacho, y pedir al SII el estado de un documento',
  'recepcion:write':
    'Proponer el acuse de recibo o el reclamo de una factura de proveedor (cada uno espera siempre tu aprobación)',
};
