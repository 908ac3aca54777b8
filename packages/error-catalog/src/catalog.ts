/**
 * The spec's error catalog (interface-spec.md, "Errors > Catalog") as data: one row per code with
 * its HTTP status, next_action and condition. Rows that the spec lists together
 * ("csrf_origin_mismatch, csrf_blocked") are one row per code here. `nextAction: null` is the
 * spec's "none": the envelope then carries no next_action. `nextActionNote` keeps the spec's
 * remark about path-specific values (a ServiceError may override next_action with that value).
 *
 * This file is the only place that maps a code to its status; everything else looks it up.
 */
export interface CatalogEntry {
  code: string;
  http: number;
  nextAction: string | null;
  nextActionNote?: string;
  condition: string;
}

export const CATALOG: readonly CatalogEntry[] = [
  {
    code: 'unauthorized',
    http: 401,
    nextAction: 'send_bearer_token',
    condition: 'no Authorization Bearer header',
  },
  {
    code: 'invalid_api_key',
    http: 401,
    nextAction: 'regenerate_api_key',
    condition: 'no active key matches',
  },
  { code: 'api_key_expired', http: 401, nextAction: 'regenerate_api_key', condition: 'key expired' },
  { code: 'api_key_revoked', http: 401, nextAction: 'regenerate_api_key', condition: 'key revoked' },
  {
    code: 'forbidden',
    http: 403,
    nextAction: 'use_api_key_with_required_scope',
    nextActionNote: 'scope cause only',
    condition: 'missing scope, or actor role not allowed',
  },
  {
    code: 'cert_id_missing',
    http: 400,
    nextAction: 'upload_certificate',
    nextActionNote: 'DTE path: send_cert_id_header',
    condition: 'no certificate loaded, signing verb',
  },
  {
    code: 'cert_id_ambiguous',
    http: 400,
    nextAction: 'send_cert_id_header',
    condition: 'several certificates current',
  },
  { code: 'org.required', http: 412, nextAction: null, condition: 'session has no organization' },
  { code: 'org.rut_missing', http: 412, nextAction: null, condition: 'organization without RUT' },
  {
    code: 'onboarding_production_not_authorized',
    http: 403,
    nextAction: null,
    condition: 'not enabled for production',
  },
  { code: 'csrf_origin_mismatch', http: 403, nextAction: null, condition: 'cross-origin session mutation' },
  { code: 'csrf_blocked', http: 403, nextAction: null, condition: 'cross-origin session mutation' },
  {
    code: 'validation_failed',
    http: 400,
    nextAction: 'fix_body_and_retry',
    condition: 'body fails schema; includes invalid RUT check digit',
  },
  { code: 'invalid_json', http: 400, nextAction: 'fix_json_body_and_retry', condition: 'body not JSON' },
  { code: 'invalid_action', http: 400, nextAction: null, condition: 'bad `action` on derive' },
  {
    code: 'idempotency_key_missing',
    http: 400,
    nextAction: 'send_idempotency_key_header',
    condition: 'header absent',
  },
  {
    code: 'idempotency_key_reused',
    http: 409,
    nextAction: 'use_new_idempotency_key',
    condition: 'key held by another pending request (pending_id in body)',
  },
  { code: 'idempotency_conflict', http: 409, nextAction: null, condition: 'same key, different body' },
  {
    code: 'emisor_rut_mismatch',
    http: 422,
    nextAction: null,
    condition: 'rut_emisor differs from the company',
  },
  {
    code: 'emisor.profile_incompleto',
    http: 422,
    nextAction: 'complete_emisor_profile',
    condition: 'emitter profile data missing (detail.missing)',
  },
  { code: 'items_empty', http: 400, nextAction: null, condition: 'empty items' },
  { code: 'items_exceed_max', http: 400, nextAction: null, condition: 'too many items (detail.count)' },
  {
    code: 'dte.print.items_limit',
    http: 422,
    nextAction: 'divide items into two documents',
    condition: 'more than 40 items',
  },
  {
    code: 'dte.print.overflow',
    http: 422,
    nextAction: 'shorten text or split',
    condition: 'content does not fit one sheet per copy',
  },
  {
    code: 'dte.print.measurement_failed',
    http: 503,
    nextAction: 'retry in minutes',
    condition: 'PDF could not be measured; stopped before folio and quota',
  },
  {
    code: 'dte.sucursal.not_found',
    http: 422,
    nextAction: 'check_sucursal_id',
    condition: 'sucursal_id not a current branch',
  },
  { code: 'amount_arithmetic', http: 400, nextAction: null, condition: 'declared amounts do not add up' },
  { code: 'references_required', http: 400, nextAction: null, condition: 'type requires references' },
  { code: 'reference_invalid_cod_ref', http: 400, nextAction: null, condition: 'cod_ref outside 1/2/3' },
  {
    code: 'text_correction_must_be_zero',
    http: 400,
    nextAction: null,
    condition: 'cod_ref 2 with non-zero amounts',
  },
  {
    code: 'dte.tipo_not_supported',
    http: 400,
    nextAction: 'fix_tipo_dte_and_retry',
    condition: 'tipo not supported by the pipeline',
  },
  {
    code: 'dte.preview.unsupported_tipo',
    http: 422,
    nextAction: 'use_supported_tipo_dte',
    condition: 'preview type outside 33, 34, 46, 52, 56, 61',
  },
  {
    code: 'dte.34.invalid_exenta',
    http: 422,
    nextAction: 'fix_tipo_dte_and_retry',
    condition: 'type 34 with taxable items',
  },
  {
    code: 'dte.41.afecto_not_allowed',
    http: 422,
    nextAction: 'fix_tipo_dte_and_retry',
    condition: 'type 41 with taxable items',
  },
  {
    code: 'dte.46.invalid_afecta',
    http: 422,
    nextAction: 'remove_exento_items_and_retry',
    condition: 'type 46 with exempt items',
  },
  {
    code: 'dte.mixed_retencion_references',
    http: 422,
    nextAction: 'split_into_separate_documents_by_retencion',
    condition: 'note mixes withheld and non-withheld references',
  },
  {
    code: 'dte.type.prod_not_certified',
    http: 422,
    nextAction: 'contact_support_to_enable_type',
    condition: 'type not enabled for production',
  },
  {
    code: 'dte.46.prod_not_certified',
    http: 422,
    nextAction: 'emit_dte_46_in_cert',
    condition: 'type 46 not authorized for production',
  },
  {
    code: 'dte.sii_env_credential_mismatch',
    http: 422,
    nextAction: 'use_api_key_matching_sii_env',
    condition: 'body sii_env contradicts key environment (detail.solicitado, detail.credencial)',
  },
  {
    code: 'dte.field_too_long',
    http: 422,
    nextAction: 'shorten_field_and_retry',
    condition: 'field exceeds schema length (detail field, element, maxLength, actualLength)',
  },
  {
    code: 'dte.field_not_latin1',
    http: 422,
    nextAction: 'fix_field_encoding_and_retry',
    condition:
      'character not representable in ISO-8859-1 (detail field, element, char, codepoint, index); accents and the letter with tilde are fine, typographic dashes, curly quotes, ellipsis and zero-width spaces are replaced by the server',
  },
  {
    code: 'not_found',
    http: 404,
    nextAction: null,
    condition: 'resource absent or of another organization; also unknown route',
  },
  {
    code: 'dte.xml.not_yet_available',
    http: 404,
    nextAction: 'poll_self',
    condition: 'XML not yet produced',
  },
  {
    code: 'dte.pdf.not_signed',
    http: 409,
    nextAction: 'poll_self',
    condition: 'not signed yet (body includes xml_url)',
  },
  { code: 'dte.list.cursor_invalido', http: 422, nextAction: 'fix_query', condition: 'bad cursor' },
  {
    code: 'dte.list.status_desconocido',
    http: 422,
    nextAction: 'fix_query',
    condition: 'sii_status filter outside vocabulary',
  },
  { code: 'dte.list.tipo_invalido', http: 422, nextAction: 'fix_query', condition: 'tipo_dte not numeric' },
  {
    code: 'dte.list.folio_invalido',
    http: 422,
    nextAction: 'fix_query',
    condition: 'folio not integer of up to 10 digits',
  },
  { code: 'dte.list.rut_receptor_invalido', http: 422, nextAction: 'fix_query', condition: 'not RUT-shaped' },
  {
    code: 'dte.list.fecha_invalida',
    http: 422,
    nextAction: 'fix_query',
    condition: 'date filter not YYYY-MM-DD',
  },
  {
    code: 'dte.list.polled_since_invalido',
    http: 422,
    nextAction: 'fix_query',
    condition: 'not ISO-8601 instant',
  },
  {
    code: 'dte.list.receptor_estado_invalido',
    http: 422,
    nextAction: 'fix_query',
    condition: 'not one of reclamado, aceptado, en_plazo, aceptado_tacito, sin_info',
  },
  { code: 'dte.totales.query_invalid', http: 400, nextAction: null, condition: 'periodo not YYYY-MM' },
  {
    code: 'pending_action_not_found',
    http: 404,
    nextAction: 'retry_original_request',
    condition: 'no pending request with that id',
  },
  { code: 'pdf_url.not_configured', http: 503, nextAction: null, condition: 'link-signing not configured' },
  {
    code: 'document.not_found',
    http: 404,
    nextAction: null,
    condition: 'document absent, other organization, or id not a uuid',
  },
  {
    code: 'document.not_templatable',
    http: 422,
    nextAction: null,
    condition: 'only 33/34 reusable as template',
  },
  {
    code: 'dte.refresh_status.no_track_id',
    http: 409,
    nextAction: 'wait_for_emit_workflow',
    nextActionNote: 'operator_review for emision_fallida, envio_repetido',
    condition: 'not yet uploaded',
  },
  { code: 'dte.refresh_status.no_cert', http: 409, nextAction: null, condition: 'no active certificate' },
  { code: 'dte.resend_delivery.not_wired', http: 501, nextAction: null, condition: 'resend unavailable' },
  {
    code: 'dte.resend_delivery.tipo_not_supported',
    http: 422,
    nextAction: 'no_action',
    condition: 'boletas are not mailed',
  },
  {
    code: 'dte.resend_delivery.no_email',
    http: 422,
    nextAction: 'provide_correo_receptor',
    condition: 'no receptor e-mail',
  },
  {
    code: 'dte.resend_delivery.no_aplica_cert',
    http: 422,
    nextAction: 'provide_correo_receptor',
    condition: 'certification document whose only address is the authority mailbox',
  },
  {
    code: 'dte.resend_delivery.importado_no_reenviable',
    http: 422,
    nextAction: 'download_pdf_or_xml',
    condition: 'imported document',
  },
  {
    code: 'dte.muestras.empty',
    http: 422,
    nextAction: 'emit_and_sign_dtes_first',
    condition: 'no signed documents for the ZIP',
  },
  {
    code: 'dte.muestras.no_samples',
    http: 422,
    nextAction: 'emit_and_sign_dtes_first',
    condition: 'none to send',
  },
  {
    code: 'dte.muestras.too_large',
    http: 422,
    nextAction: 'paginate_into_multiple_emails',
    condition: 'batch over 3 MB',
  },
  {
    code: 'dte.muestras.send_not_configured',
    http: 422,
    nextAction: 'contact_support',
    condition: 'sender not configured',
  },
  { code: 'dte.muestras.not_sent', http: 422, nextAction: null, condition: 'unmapped reason in message' },
  { code: 'dte.muestras.send_not_wired', http: 501, nextAction: null, condition: 'send unavailable' },
  {
    code: 'cert.missing',
    http: 412,
    nextAction: 'upload_certificate',
    condition: 'no active certificate (folio request)',
  },
  { code: 'cert_not_found', http: 404, nextAction: null, condition: 'no certificate loaded' },
  { code: 'cert_expired', http: 422, nextAction: null, condition: 'expired (detail.expiredAt)' },
  {
    code: 'cert_subject_mismatch',
    http: 422,
    nextAction: null,
    condition: 'certificate RUT not the emitter',
  },
  {
    code: 'cert.kms.auth_failed',
    http: 422,
    nextAction: 'reseed_certificate',
    condition: 'decryption failed',
  },
  { code: 'caf_not_found', http: 404, nextAction: null, condition: 'no CAF for the type (detail.tipoDte)' },
  { code: 'caf_expired', http: 422, nextAction: 'upload_caf', condition: 'CAF expired' },
  {
    code: 'caf_exhausted',
    http: 422,
    nextAction: 'upload_caf',
    condition: 'no folios left (detail.nextFolio)',
  },
  { code: 'sii_env_mismatch', http: 422, nextAction: null, condition: 'CAF belongs to another environment' },
  {
    code: 'dte.production_resolucion_missing',
    http: 409,
    nextAction: 'capture_sii_resolucion',
    condition: 'production resolution number/date missing',
  },
  { code: 'cert.invalid_request', http: 400, nextAction: null, condition: 'file, password or label missing' },
  { code: 'cert.invalid', http: 422, nextAction: null, condition: '.p12 unreadable' },
  { code: 'cert.duplicate', http: 409, nextAction: null, condition: 'fingerprint already loaded' },
  { code: 'cert.not_found', http: 404, nextAction: null, condition: '' },
  { code: 'cert.expired', http: 409, nextAction: null, condition: 'expired certificate cannot be default' },
  {
    code: 'cert.last_remaining',
    http: 409,
    nextAction: 'upload_certificate',
    condition: 'only certificate cannot be deleted',
  },
  { code: 'caf.invalid_request', http: 400, nextAction: null, condition: 'file missing' },
  { code: 'caf.parse_error', http: 422, nextAction: null, condition: 'CAF XML lacks RE/TD/D/H' },
  { code: 'caf.wrong_tipo', http: 422, nextAction: null, condition: 'CAF differs from tipo_esperado' },
  { code: 'caf.no_certificate', http: 422, nextAction: null, condition: 'upload certificate first' },
  { code: 'caf.duplicate', http: 409, nextAction: null, condition: 'folio range already registered' },
  { code: 'caf.not_found', http: 404, nextAction: null, condition: '' },
  { code: 'caf.has_accepted_dtes', http: 409, nextAction: null, condition: '6-year retention' },
  { code: 'caf.has_ceded_dtes', http: 409, nextAction: null, condition: 'a document was ceded' },
  {
    code: 'caf.request_in_flight',
    http: 409,
    nextAction: null,
    condition: 'recent folio request for the type',
  },
  { code: 'caf.request_failed', http: 502, nextAction: null, condition: 'authority request failed' },
  { code: 'caf.grant_rejected', http: 502, nextAction: null, condition: 'authority refused' },
  {
    code: 'caf.persist_failed',
    http: 502,
    nextAction: null,
    condition: 'range granted but not stored; do not request again, recover at the authority portal',
  },
  {
    code: 'caf.cert_not_authorized',
    http: 502,
    nextAction: null,
    condition: 'certificate not authorized to stamp',
  },
  {
    code: 'caf.type_not_prod_certified',
    http: 409,
    nextAction: null,
    condition: 'type not authorized for production',
  },
  {
    code: 'caf.auto_requires_production',
    http: 409,
    nextAction: null,
    condition: 'automatic stamping only in production',
  },
  {
    code: 'situacion_tributaria.bloqueada',
    http: 409,
    nextAction: null,
    condition:
      'RUT not in the authority or without activity start; body field `estado` is rut_inexistente or sin_inicio_actividades',
  },
  {
    code: 'situacion_tributaria.rate_limit',
    http: 429,
    nextAction: null,
    condition: 'too many queries; retry_after_seconds',
  },
  {
    code: 'onboarding.autopilot_migrante_sin_activar',
    http: 409,
    nextAction: null,
    condition: 'autopilot requested for a migrating company not yet activated',
  },
  { code: 'invalid_rut', http: 400, nextAction: null, condition: 'bad check digit on solicitar-acceso' },
  { code: 'access_request.rate_limit', http: 429, nextAction: null, condition: 'hourly cap per requester' },
  { code: 'access_request.not_found', http: 404, nextAction: null, condition: 'decision token unknown' },
  {
    code: 'access_request.expired',
    http: 410,
    nextAction: null,
    condition: 'older than 7 days or target organization gone',
  },
  {
    code: 'dte.nota_credito.fuera_plazo',
    http: 422,
    nextAction: 'consult_lawyer_or_use_correction_path',
    condition: 'credit note beyond 6 months (Ley 21.398)',
  },
  {
    code: 'fuera_plazo',
    http: 422,
    nextAction: null,
    condition: 'same limit via derive; body days_overdue; no override',
  },
  {
    code: 'nc.over_cedida.blocked',
    http: 422,
    nextAction: 'confirm_override_and_retry',
    condition: 'invoice ceded with irrevocable acceptance of 8 days or more',
  },
  {
    code: 'dte.nota_credito.cedida_override_required',
    http: 409,
    nextAction: 'confirm_override_and_retry',
    condition: 'same block at emission check',
  },
  {
    code: 'cedida_override_required',
    http: 409,
    nextAction: null,
    condition: 'same block via derive; retry with override_cedida true',
  },
  { code: 'dte.nota_credito.invalid_cod_ref', http: 422, nextAction: 'fix_cod_ref_and_retry', condition: '' },
  {
    code: 'dte.nota_credito.reference_tipo_unsupported',
    http: 422,
    nextAction: 'use_factura_33_or_34_reference',
    condition: '',
  },
  {
    code: 'dte.nota_credito.plazo_anulacion_override_required',
    http: 409,
    nextAction: 'confirm_override_and_retry',
    condition: 'annulment outside same or next tax period; retry with override_plazo_anulacion',
  },
  {
    code: 'plazo_anulacion_override_required',
    http: 409,
    nextAction: null,
    condition: 'via derive; body plazo_vencio_el, days_overdue',
  },
  {
    code: 'dte.nota_credito.invalid_reason',
    http: 422,
    nextAction: 'fix_reason_and_retry',
    condition: 'nc_reason outside catalog or incoherent',
  },
  {
    code: 'dte.nota_debito.interese_moratorio_legal',
    http: 422,
    nextAction: 'consult_oficio_2011_2020',
    condition: '',
  },
  {
    code: 'dte.nota_debito.invalid_reason',
    http: 422,
    nextAction: 'fix_reason_and_retry',
    condition: 'detail.validReasons',
  },
  {
    code: 'dte.nota_debito.reference_tipo_unsupported',
    http: 422,
    nextAction: 'use_supported_reference_tipo',
    condition: '',
  },
  {
    code: 'dte.reference.single_required',
    http: 422,
    nextAction: 'split_into_one_note_per_document',
    condition: 'cod_ref 1 or 2 with several references',
  },
  {
    code: 'dte.reference.cross_env',
    http: 422,
    nextAction: 'emit_in_the_same_sii_env',
    condition: 'referenced folio exists only in the other environment',
  },
  {
    code: 'nota_previa_override_required',
    http: 409,
    nextAction: null,
    condition:
      'document already has an annulling or amount-correcting note; body nota_previa, total_notas_previas, cobertura (completa or parcial); retry with override_nota_previa true',
  },
  {
    code: 'importado_confirm_required',
    http: 409,
    nextAction: null,
    condition: 'imported document, partial coverage; retry with override_nota_previa true',
  },
  { code: 'dte.52.dispatch_required', http: 400, nextAction: 'include_despacho_and_retry', condition: '' },
  { code: 'dte.52.transportista_required', http: 422, nextAction: null, condition: 'detail.field' },
  { code: 'dte.52.conductor_required', http: 422, nextAction: null, condition: 'detail.field' },
  { code: 'dte.52.vehiculo_required', http: 422, nextAction: null, condition: 'detail.field' },
  { code: 'dte.52.parent_invalid', http: 500, nextAction: null, condition: '' },
  {
    code: 'guia.tipo_invalido',
    http: 409,
    nextAction: 'use_nota_credito_para_factura',
    condition: 'not a type 52',
  },
  { code: 'guia.ya_facturada', http: 409, nextAction: 'anula_la_factura_via_nota_credito', condition: '' },
  { code: 'sii_rejection', http: 422, nextAction: null, condition: 'detail.code and detail.glosa' },
  { code: 'sii_unavailable', http: 503, nextAction: null, condition: 'detail.retryAfterSec' },
  { code: 'sii_invalid_track_id', http: 502, nextAction: null, condition: '' },
  {
    code: 'dte.tipo_cambio_unavailable',
    http: 503,
    nextAction: 'retry_later',
    condition: 'export exchange rate source down; no folio used; safe to retry with same key',
  },
  { code: 'rate_limit', http: 429, nextAction: null, condition: 'detail.retryAfterSec' },
  { code: 'internal_error', http: 500, nextAction: null, condition: '' },
  { code: 'empresa.not_found', http: 404, nextAction: null, condition: '' },
  { code: 'empresa.conflict', http: 409, nextAction: null, condition: 'RUT already in register' },
  {
    code: 'empresa.correos_no_editable_por_mcp',
    http: 422,
    nextAction: 'remove_correos_and_retry',
    condition: 'MCP cannot write counterpart e-mails',
  },
  {
    code: 'shopify.cert_not_found',
    http: 404,
    nextAction: null,
    condition: 'integration references an unknown certificate_id',
  },
  {
    code: 'recepcion.query_invalid',
    http: 400,
    nextAction: null,
    condition: 'page and pageSize integers, pageSize 1-500; also bad cedida value',
  },
  { code: 'recepcion.no_encontrado', http: 404, nextAction: null, condition: '' },
  { code: 'recepcion.evento_invalid_input', http: 400, nextAction: null, condition: 'accion not admitted' },
  { code: 'recepcion.rar_tipo_no_soportado', http: 422, nextAction: null, condition: '' },
  {
    code: 'recepcion.rar_evento_rechazado',
    http: 422,
    nextAction: null,
    condition: 'authority refused; codResp and detail',
  },
  { code: 'recepcion.rar_cedible_warning', http: 409, nextAction: null, condition: 'requiresOverride true' },
  {
    code: 'mcp_rate_limited',
    http: 429,
    nextAction: null,
    condition: 'MCP action cap; retry_after_seconds, Retry-After',
  },
  {
    code: 'mcp.emit_rate_limited',
    http: 429,
    nextAction: 'wait_and_retry',
    condition: 'per-action-type per-minute caps of MCP connections',
  },
  {
    code: 'mcp.borrador_rate_limited',
    http: 429,
    nextAction: 'wait_and_retry',
    condition: 'per-action-type per-minute caps of MCP connections',
  },
  {
    code: 'mcp.reenvio_rate_limited',
    http: 429,
    nextAction: 'wait_and_retry',
    condition: 'per-action-type per-minute caps of MCP connections',
  },
  {
    code: 'mcp.emit_rate_limit_invalid',
    http: 429,
    nextAction: 'fix_org_mcp_rate_limit',
    condition: 'company cap value invalid',
  },
  {
    code: 'mcp.borrador_rate_limit_invalid',
    http: 429,
    nextAction: 'fix_org_mcp_rate_limit',
    condition: 'company cap value invalid',
  },
  {
    code: 'mcp.reenvio_rate_limit_invalid',
    http: 429,
    nextAction: 'fix_org_mcp_rate_limit',
    condition: 'company cap value invalid',
  },
  {
    code: 'boleta.tipo_no_habilitado',
    http: 422,
    nextAction: 'contact_support_to_enable_type',
    condition: '',
  },
  { code: 'boleta.credentials.not_found', http: 404, nextAction: 'configure_sii_credentials', condition: '' },
  { code: 'boleta.rest.unavailable', http: 502, nextAction: 'retry_with_backoff', condition: '' },
  { code: 'boleta.rest.token_expired', http: 401, nextAction: 'reauthenticate', condition: '' },
  { code: 'boleta.rest.pipeline_error', http: 500, nextAction: 'operator_review', condition: 'detail.phase' },
  { code: 'boleta.xml.not_yet_available', http: 404, nextAction: 'poll_self', condition: '' },
  {
    code: 'validation_error',
    http: 422,
    nextAction: null,
    condition: 'batch payload and resend-delivery e-mail; errors[]',
  },
  { code: 'boleta.batch.exceeds_max', http: 422, nextAction: 'split_batch', condition: 'detail.max' },
  {
    code: 'boleta.batch.idempotency_conflict',
    http: 409,
    nextAction: 'poll_existing_or_change_key',
    condition: 'detail.batchId',
  },
  { code: 'boleta.batch.not_found', http: 404, nextAction: 'verify_batch_id', condition: '' },
  { code: 'bhe.credential.invalid', http: 401, nextAction: 'configure_bhe_credential', condition: '' },
  {
    code: 'bhe.plazo_anulacion.expired',
    http: 422,
    nextAction: 'consult_sii_or_manual_rectification',
    condition: 'beyond 3 months',
  },
  {
    code: 'bhe.retencion.mismatch',
    http: 422,
    nextAction: 'use_calculated_retencion',
    condition: 'detail.expected',
  },
  { code: 'bhe.receptor.tipo_invalid', http: 422, nextAction: 'fix_receptor_and_retry', condition: '' },
  { code: 'bhe.rest.unavailable', http: 502, nextAction: 'retry_with_backoff', condition: '' },
  { code: 'bhe.rest.token_expired', http: 401, nextAction: 'reauthenticate', condition: '' },
  { code: 'bhe.rest.pipeline_error', http: 500, nextAction: 'operator_review', condition: '' },
  { code: 'bhe.not_found', http: 404, nextAction: null, condition: '' },
  {
    code: 'billing.free_tier_exceeded',
    http: 402,
    nextAction: 'upgrade_plan',
    condition: 'detail.usedThisMonth, detail.limit',
  },
  { code: 'db.unavailable', http: 503, nextAction: null, condition: 'transient; retry with backoff' },
  { code: 'db.pool_exhausted', http: 503, nextAction: null, condition: 'transient; retry with backoff' },
  { code: 'cert.kms_unavailable', http: 503, nextAction: null, condition: 'transient; retry with backoff' },
  { code: 'caf.kms_unavailable', http: 503, nextAction: null, condition: 'transient; retry with backoff' },
  { code: 'cert.insert_failed', http: 500, nextAction: null, condition: '' },
  { code: 'caf.insert_failed', http: 500, nextAction: null, condition: '' },
  { code: 'rcv.sync.failed', http: 502, nextAction: 'retry_sync', condition: 'detail.periodo' },
  { code: 'rcv.unauthorized', http: 401, nextAction: 'configure_sii_credential', condition: '' },
  {
    code: 'rcv.period.invalid',
    http: 422,
    nextAction: 'fix_period_and_retry',
    condition: 'must be YYYY-MM and not in the future',
  },
  { code: 'rcv.not_found', http: 404, nextAction: 'sync_first', condition: 'no snapshot for the period' },
  {
    code: 'webhook_endpoint_disabled',
    http: 409,
    nextAction: null,
    condition: 'test on inactive subscription',
  },
  { code: 'invalid_webhook_url', http: 422, nextAction: null, condition: 'URL not public https' },
];

const byCode = new Map<string, CatalogEntry>(CATALOG.map((e) => [e.code, e]));

/** The catalog row of a code, or undefined for a code the spec does not document. */
export function catalogEntry(code: string): CatalogEntry | undefined {
  return byCode.get(code);
}

export function isDocumentedCode(code: string): boolean {
  return byCode.has(code);
}

/** HTTP status of a code; an undocumented code is a programming error and answers 500. */
export function httpStatusOf(code: string): number {
  return byCode.get(code)?.http ?? 500;
}

/**
 * The anchor of a code's row in the published catalog: `error-` followed by the code with every
 * character outside [a-z0-9_-] replaced by `-` (so `cert.kms.auth_failed` → `error-cert-kms-auth_failed`).
 */
export function docsAnchor(code: string): string {
  return `error-${code.toLowerCase().replace(/[^a-z0-9_-]/g, '-')}`;
}

/** Link to the row of a documented code in the catalog page at `catalogUrl`; undefined otherwise. */
export function docsUrl(code: string, catalogUrl: string): string | undefined {
  return byCode.has(code) ? `${catalogUrl}#${docsAnchor(code)}` : undefined;
}
