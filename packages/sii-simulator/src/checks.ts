/**
 * What the SII checks in an EnvioDTE it accepted for upload (STATUS 0), in its order, and the
 * verdict each failure gives:
 *
 *   1. schema (EnvioDTE_v10.xsd)                                  → RSC
 *   2. envelope signature (SetDTE, read inside the envelope)      → RFR
 *   3. Carátula: RutEnvia = the authenticated certificate's RUT and the envelope signer's,
 *      RutEmisor = the form's company, RutReceptor = 60803000-K, FchResol/NroResol = the
 *      company's resolution in this environment, SubTotDTE = the documents sent → RCT
 *   4. each document (read as a standalone DTE): issuer = Carátula's, signature, CAF FRMA by
 *      this environment's SII key, CAF issuer and type, folio inside the CAF range, CAF not
 *      expired, issue date not before the CAF, TED, folio not used before → that document RCH;
 *      the amounts as the SII reviews them (@dte/engine checkDocumentAmounts: a line that is not
 *      price × quantity ± discounts is a reparo, DET 200; a header sum, the VAT or the total that
 *      does not add up is a rejection, HED level 3); an issue date older than `reparoDays` →
 *      reparo (accepted with objections)
 *   otherwise EPR, with per-type counts.
 *
 * The signature, TED, CAF and schema rules themselves are @dte/engine's.
 */
import { cafExpiryDate } from '@dte/engine';
import { validateEnvioSchema, verifyEnvioDte, type EnvioVerification, type ParsedEnvio } from './engine';
import { chileDate } from './chile-time';
import { normalizeRut } from './rut';
import type { Company, DocumentResult, EnvelopeVerdict, SiiEnv, SiiFinding } from './types';
import { SII_RUT } from './types';

export interface CheckInput {
  env: SiiEnv;
  /** the uploaded file, as received (the engine decodes it as its declaration says) */
  file: Buffer;
  /** the file as the route already decoded and read it (readEnvio: each part parsed once) */
  parsed?: ParsedEnvio;
  /** RUT of the authenticated user (the token's certificate) */
  senderRut: string;
  /** the form's rutCompany-dvCompany */
  companyRut: string;
  company: Company;
  /** accept (and adopt) whatever resolution the Carátula carries: auto-enrol mode */
  adoptResolution: boolean;
  siiPublicKeys: Record<string, string>;
  /** has this folio been processed before in this environment? */
  folioUsed: (rutEmisor: string, tipo: number, folio: number) => boolean;
  now: number;
  reparoDays: number;
  /** the envelope's schema: EnvioDTE (DTEUpload, default) or EnvioBOLETA (boleta REST envío) */
  schema?: 'EnvioDTE' | 'EnvioBOLETA';
}

export interface DocumentOutcome {
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  rutReceptor: string;
  fchEmis: string;
  mntTotal: number;
  result: DocumentResult;
  detail: string[];
  /** the same findings in the SII's shape (`error[]` of the boleta REST status) */
  errors: SiiFinding[];
  /** false when the rejection is "folio already used": the earlier record stays */
  recordsFolio: boolean;
}

/** This simulator's codes for the non-amount checks of one document (UNCONFIRMED). */
function dteFinding(nivel: 1 | 2 | 3, descripcion: string): SiiFinding {
  return { seccion: 'DTE', linea: 0, nivel, codigo: nivel === 3 ? 1 : 2, descripcion, detalle: '' };
}

export interface CheckOutcome {
  verdict: EnvelopeVerdict;
  errors: string[];
  documents: DocumentOutcome[];
}

export async function checkEnvelope(input: CheckInput): Promise<CheckOutcome> {
  const schema = await validateEnvioSchema(input.file, { schema: input.schema ?? 'EnvioDTE' });
  if (!schema.valid) return { verdict: 'RSC', errors: schema.errors, documents: [] };

  let v: EnvioVerification;
  try {
    v = verifyEnvioDte(input.file, {
      siiPublicKeys: input.siiPublicKeys,
      ...(input.parsed ? { parsed: input.parsed } : {}),
    });
  } catch (err) {
    return {
      verdict: 'RFR',
      errors: [`envelope could not be verified: ${(err as Error).message}`],
      documents: [],
    };
  }
  if (!v.envelopeSignature.valid)
    return {
      verdict: 'RFR',
      errors: [`envelope signature invalid: ${v.envelopeSignature.error ?? 'signature does not verify'}`],
      documents: [],
    };

  const rct = caratulaErrors(input, v);
  if (rct.length > 0) return { verdict: 'RCT', errors: rct, documents: [] };

  const documents: DocumentOutcome[] = [];
  const seen = new Set<string>();
  const caratulaEmisor = normalizeRut(v.caratula.rutEmisor) ?? v.caratula.rutEmisor;
  for (const d of v.documents) {
    const rutEmisor = normalizeRut(d.rutEmisor) ?? d.rutEmisor;
    const rejects: string[] = [];
    const reparos: string[] = [];
    let recordsFolio = true;
    if (rutEmisor !== caratulaEmisor) rejects.push('RUT emisor del DTE no corresponde al de la carátula');
    if (!d.signatureValid) rejects.push(`firma del DTE inválida: ${d.signatureError ?? 'no verifica'}`);
    const caf = d.caf;
    if (!caf.rutEmisor) rejects.push('DTE sin CAF');
    else {
      if (d.cafSignatureValid !== true)
        rejects.push(`CAF no autorizado por el SII: ${d.cafError ?? 'firma FRMA inválida'}`);
      if ((normalizeRut(caf.rutEmisor) ?? caf.rutEmisor) !== rutEmisor) rejects.push('CAF de otro emisor');
      if (Number(caf.tipoDte) !== Number(d.tipoDte)) rejects.push('CAF de otro tipo de documento');
      if (d.folio < caf.desde || d.folio > caf.hasta)
        rejects.push(`folio ${d.folio} fuera del rango autorizado ${caf.desde}-${caf.hasta}`);
      if (d.fchEmis < caf.fechaAutorizacion)
        rejects.push('fecha de emisión anterior a la autorización del CAF');
      const vence = cafExpiryDate(Number(d.tipoDte), caf.fechaAutorizacion);
      if (vence !== null && d.fchEmis >= vence)
        rejects.push(`CAF vencido (autorizado el ${caf.fechaAutorizacion}, no válido desde ${vence})`);
    }
    if (!d.tedValid) rejects.push(`timbre electrónico (TED) inválido: ${d.tedError ?? 'no verifica'}`);
    const key = `${rutEmisor}|${d.tipoDte}|${d.folio}`;
    if (input.folioUsed(rutEmisor, d.tipoDte, d.folio) || seen.has(key)) {
      rejects.push(`folio ${d.folio} del tipo ${d.tipoDte} ya fue utilizado`);
      recordsFolio = false;
    }
    seen.add(key);
    const errors: SiiFinding[] = rejects.map((m) => dteFinding(3, m));
    for (const f of d.amountFindings) {
      const text = `(${f.seccion} L[${f.linea}] -${f.nivel}-${f.codigo}) ${f.descripcion}: ${f.detalle}`;
      (f.nivel === 3 ? rejects : reparos).push(text);
      errors.push(f);
    }
    const age = daysBetween(d.fchEmis, chileDate(input.now));
    if (age > input.reparoDays) {
      const m = `fecha de emisión ${d.fchEmis} anterior en más de ${input.reparoDays} días a la recepción`;
      reparos.push(m);
      errors.push(dteFinding(2, m));
    }
    documents.push({
      tipoDte: Number(d.tipoDte),
      folio: Number(d.folio),
      rutEmisor,
      rutReceptor: normalizeRut(d.rutReceptor) ?? d.rutReceptor,
      fchEmis: d.fchEmis,
      mntTotal: Number(d.mntTotal),
      result: rejects.length > 0 ? 'RECHAZADO' : reparos.length > 0 ? 'REPARO' : 'ACEPTADO',
      detail: rejects.length > 0 ? rejects : reparos,
      errors,
      recordsFolio,
    });
  }
  return { verdict: 'EPR', errors: [], documents };
}

function caratulaErrors(input: CheckInput, v: EnvioVerification): string[] {
  const c = v.caratula;
  const errors: string[] = [];
  const rutEnvia = normalizeRut(c.rutEnvia);
  if (rutEnvia !== input.senderRut)
    errors.push(`RutEnvia ${c.rutEnvia} no corresponde al usuario autenticado ${input.senderRut}`);
  const signer = v.envelopeSignature.certificate?.rut;
  if (signer && normalizeRut(signer) !== rutEnvia)
    errors.push(`RutEnvia ${c.rutEnvia} no corresponde al certificado que firma el envío (${signer})`);
  if (normalizeRut(c.rutEmisor) !== input.companyRut)
    errors.push(`RutEmisor ${c.rutEmisor} no corresponde a la empresa del envío ${input.companyRut}`);
  if (normalizeRut(c.rutReceptor) !== SII_RUT)
    errors.push(`RutReceptor ${c.rutReceptor} debe ser ${SII_RUT}`);
  if (input.env === 'cert' && Number(c.nroResol) !== 0)
    errors.push(`NroResol ${c.nroResol} debe ser 0 en certificación`);
  if (!input.adoptResolution) {
    if (c.fchResol !== input.company.fchResol || Number(c.nroResol) !== input.company.nroResol)
      errors.push(
        `resolución ${c.nroResol} del ${c.fchResol} no corresponde a la de la empresa (${input.company.nroResol} del ${input.company.fchResol})`,
      );
  }
  const declared = subTotals(c.subTotales);
  const actual = new Map<number, number>();
  for (const d of v.documents) actual.set(Number(d.tipoDte), (actual.get(Number(d.tipoDte)) ?? 0) + 1);
  const types = new Set([...declared.keys(), ...actual.keys()]);
  for (const t of types)
    if ((declared.get(t) ?? 0) !== (actual.get(t) ?? 0))
      errors.push(
        `SubTotDTE del tipo ${t} declara ${declared.get(t) ?? 0} documentos y el envío trae ${actual.get(t) ?? 0}`,
      );
  return errors;
}

function subTotals(raw: EnvioVerification['caratula']['subTotales']): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of raw) out.set(s.tpoDte, (out.get(s.tpoDte) ?? 0) + s.nroDte);
  return out;
}

function daysBetween(from: string, to: string): number {
  return Math.floor((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}
