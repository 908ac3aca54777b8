import { checkBusinessRules } from './business-rules';
import { mapDocument } from './build-document';
import { conditionalIssues } from './conditional-rules';
import { validationFailed } from './errors';
import { normalizeInput, trimStrings } from './normalize';
import { DTE_ENDPOINT_TIPOS, precheck } from './prechecks';
import { schemaIssues } from './schemas';
import { assertDeclaredAmounts, computeTotals, type Totals } from './totals';
import type { DteDocument } from '../model';
import type { EmissionContext, EmissionInput } from './types';

/**
 * What validation computed on the way: the normalized input, its totals and the document of its
 * dry run (folio 0, no exchange rate). When the document needs no exchange rate
 * (needsExchangeRate false) these are exactly what computeTotals(input) and
 * buildDocument(input, { emisor, folio: 0 }) would give again, so an emission uses them instead
 * of computing them twice.
 */
export interface ValidatedEmission {
  input: EmissionInput;
  totals: Totals;
  draft: DteDocument;
}

/**
 * Validates an emission body of POST /dtes and returns it normalized. Pure: the clock and the
 * company profile come in `ctx`. Throws ServiceError with the spec's catalog code. Order:
 *
 * 1. prechecks (prechecks.ts): conditions with their own code that the schema would otherwise
 *    report as validation_failed (tipo_dte, items_empty/items_exceed_max,
 *    dte.52.dispatch_required, references_required, reference_invalid_cod_ref, nd/nc_reason).
 * 2. JSON Schema of the body's shape (schemas/http) on the trimmed body -> validation_failed
 *    with one issue per field (invalid RUT check digits included, via format "rut").
 * 3. normalization (typographic replacements, defaults, RUT form).
 * 4. the spec's rules JSON Schema cannot state (conditional-rules.ts): 33/34 receptor fields
 *    and forma_pago, the fecha_emision window in America/Santiago, SII decimal places, 52's
 *    tipo_despacho -> validation_failed.
 * 5. business rules (business-rules.ts), each with its code.
 * 6. totals against the declared amounts -> amount_arithmetic.
 * 7. a dry run of the mapping to DteDocument (folio 0): emisor.profile_incompleto,
 *    dte.sucursal.not_found, dte.field_not_latin1, dte.field_too_long.
 */
export function validateEmission(body: unknown, ctx: EmissionContext): EmissionInput {
  return validateEmissionDraft(body, ctx).input;
}

/** validateEmission, keeping its totals and dry-run document (ValidatedEmission). */
export function validateEmissionDraft(body: unknown, ctx: EmissionContext): ValidatedEmission {
  // Every string is trimmed first ("trimmed, not empty"), so each later check sees the same text.
  const trimmed = trimStrings(body) as Record<string, unknown>;
  const { tipo, shape } = precheck(trimmed, ctx.tipos ?? DTE_ENDPOINT_TIPOS);
  const issues = schemaIssues(shape, trimmed, tipo);
  if (issues.length > 0) throw validationFailed(issues);

  const input = normalizeInput(trimmed, ctx.now);
  const ruleIssues = conditionalIssues(input, ctx.now);
  if (ruleIssues.length > 0) throw validationFailed(ruleIssues);

  checkBusinessRules(input, ctx);
  const totals = computeTotals(input);
  assertDeclaredAmounts(input, totals);
  const draft = mapDocument(input, { emisor: ctx.emisor, folio: 0 }, totals);
  return { input, totals, draft };
}
