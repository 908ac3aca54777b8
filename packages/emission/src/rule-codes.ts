/**
 * The codes a DTE body's own rules answer (the engine's validation, the company's profile, the
 * branch, the exchange rate): issuing it (POST /dtes) and previewing it (POST /dtes/preview) run
 * the same rules, so their OpenAPI error lists name these from here.
 */
export const DOCUMENT_RULE_CODES = [
  'dte.tipo_not_supported',
  'dte.sii_env_credential_mismatch',
  'emisor_rut_mismatch',
  'emisor.profile_incompleto',
  'items_empty',
  'items_exceed_max',
  'references_required',
  'amount_arithmetic',
  'dte.52.dispatch_required',
  'dte.sucursal.not_found',
  'dte.field_too_long',
  'dte.field_not_latin1',
  'dte.tipo_cambio_unavailable',
] as const;
