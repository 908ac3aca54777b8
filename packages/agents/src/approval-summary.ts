import { DOCUMENT_NAMES, formatRut } from '@dte/printed-form';
import { clp } from '@dte/es-cl';
import type { DataSource } from 'typeorm';
import type { Principal } from '@dte/tenancy';
import { derivedEmissionBody, type DeriveBody, emissionTotals, validateForEmission } from '@dte/emission';

/** Types an MCP emission over an existing document issues (notes carry references). */
const NOTE_TIPOS = [56, 61];

const OVERRIDES: Record<string, string> = {
  override_cedida: 'emitir aunque la factura fue cedida (override_cedida)',
  override_plazo_anulacion: 'anular fuera del plazo legal (override_plazo_anulacion)',
  override_nota_previa: 'emitir aunque ya existe una nota que anula o corrige montos (override_nota_previa)',
};

const COD_REF: Record<number, string> = {
  1: 'código 1, anula el documento',
  2: 'código 2, corrige texto',
  3: 'código 3, corrige montos',
};

const REFERENCE_NAMES: Record<string, string> = {
  '30': 'Factura',
  '32': 'Factura exenta',
  '801': 'Orden de compra',
  '802': 'Nota de pedido',
  '803': 'Contrato',
  HES: 'Hoja de entrada de servicios',
};

/** FACTURA ELECTRÓNICA → Factura electrónica */
export function documentName(tipo: number | string): string {
  const upper = DOCUMENT_NAMES[Number(tipo)];
  if (!upper) return REFERENCE_NAMES[String(tipo)] ?? `Documento tipo ${String(tipo)}`;
  const lower = upper.toLocaleLowerCase('es-CL');
  return lower.charAt(0).toLocaleUpperCase('es-CL') + lower.slice(1);
}

const ddmmaaaa = (iso: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : iso;
};

/** The override_* flags set to true in a body (emission or derivation). */
export function overridesOf(body: unknown): string[] {
  if (!body || typeof body !== 'object') return [];
  return Object.entries(body as Record<string, unknown>)
    .filter(([k, v]) => k.startsWith('override_') && v === true)
    .map(([k]) => k);
}

/** Whether an emission body issues a 56/61 (always over an existing document) or forces a rule. */
export function emissionNeedsApproval(body: unknown): boolean {
  const tipo = Number((body as { tipo_dte?: unknown } | null)?.tipo_dte);
  return NOTE_TIPOS.includes(tipo) || overridesOf(body).length > 0;
}

/** Whether a derivation issues a note over the document (every action but copy) or forces a rule. */
export function derivationNeedsApproval(body: DeriveBody): boolean {
  return body.action !== 'copy' || overridesOf(body).length > 0;
}

interface Reference {
  tipo_doc_ref: number | string;
  folio_ref: number | string;
  fecha_ref?: string;
  cod_ref?: number;
  razon_ref?: string;
}

/**
 * What the approver reads before an irreversible emission: the document's type in words, the
 * customer (name and RUT), the amount in CLP, the document it references (type, folio, date)
 * and what will be sent to the SII. The body goes through the same validation as POST /dtes
 * (an invalid one is refused now, nothing parked).
 */
export async function describeEmission(
  db: DataSource,
  principal: Principal,
  body: Record<string, unknown>,
  now: Date,
  lead?: string,
): Promise<string> {
  const { input } = await validateForEmission(db, principal as Principal & { companyId: string }, body, now);
  const tipo = Number(input.tipo_dte);
  const name = documentName(tipo);
  const receptor = (input as { receptor?: { rut?: string; razon_social?: string } }).receptor ?? {};
  const refs = ((input as { references?: Reference[] }).references ?? []) as Reference[];
  const { clp: totals } = emissionTotals(input, {});
  const refText = refs
    .map(
      (r) =>
        `${documentName(r.tipo_doc_ref)} N° ${String(r.folio_ref)}${r.fecha_ref ? ` del ${ddmmaaaa(r.fecha_ref)}` : ''}${
          r.cod_ref ? ` (${COD_REF[r.cod_ref] ?? `código ${r.cod_ref}`})` : ''
        }`,
    )
    .join('; ');
  const parts = [
    lead ?? `Emitir ${name.charAt(0).toLocaleLowerCase('es-CL')}${name.slice(1)}`,
    refs.length ? `Sobre: ${refText}` : null,
    `Cliente: ${receptor.razon_social ?? '—'} (RUT ${receptor.rut ? formatRut(receptor.rut) : '—'})`,
    `Monto: ${clp(totals.montoTotal)}`,
    `Se enviará al SII: una ${name.toLocaleLowerCase('es-CL')} (tipo ${tipo}) por ${clp(totals.montoTotal)}${
      refs[0]?.cod_ref ? `, referencia código ${refs[0].cod_ref}` : ''
    }${refs[0]?.razon_ref ? `, razón «${refs[0].razon_ref}»` : ''}`,
  ];
  const forced = overridesOf(body).map((k) => OVERRIDES[k] ?? k);
  if (forced.length) parts.push(`Fuerza las reglas: ${forced.join('; ')}`);
  return `${parts.filter(Boolean).join('. ')}.`;
}

const DERIVE_LEADS: Record<string, string> = {
  anular: 'Anular',
  'corregir-nc': 'Corregir montos (rebaja) de',
  'corregir-nd': 'Corregir montos (aumento) de',
  'corregir-texto': 'Corregir el texto de',
  copy: 'Copiar',
};

/**
 * A derivation's summary: the original is read in the caller's organization, company and
 * environment (another organization's document: document.not_found, nothing parked), then the
 * note it would issue is described as an emission.
 */
export async function describeDerivation(
  db: DataSource,
  principal: Principal,
  id: string,
  req: DeriveBody,
  now: Date,
): Promise<string> {
  const body = await derivedEmissionBody(db, principal, id, req);
  const ref = ((body.references as Reference[] | undefined) ?? [])[0];
  const original = ref
    ? `${documentName(ref.tipo_doc_ref)} N° ${String(ref.folio_ref)}`
    : `el documento ${id}`;
  const note = documentName(Number(body.tipo_dte));
  const lead = `${DERIVE_LEADS[req.action] ?? req.action} ${original} con una ${note.toLocaleLowerCase('es-CL')}`;
  return describeEmission(db, principal, body, now, lead);
}
