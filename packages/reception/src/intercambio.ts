/**
 * A received intercambio file: an EnvioDTE another issuer sends us (or one lone DTE), read
 * safely (safe-xml.ts) and verified with the engine before anything is stored:
 *
 * - EnvioDTE: the envelope signature (SetDTE) must verify and the Carátula's RutReceptor must be
 *   the receiving company (`sobre_para_otra_empresa`);
 * - every DTE: addressed to the receiving company (`dte_para_otra_empresa`), its own signature
 *   (`firma_dte_invalida`), its TED (`ted_invalido`: FRMT by the CAF key, DD against the
 *   document), its CAF (`caf_invalido`: the DA's FRMA must verify with the SII key of its IDK in
 *   the environment, and the DA must grant the range to the DTE's issuer: a supplier's own CAF
 *   cannot stamp another issuer's document) and its totals (`totales_invalidos`).
 *
 * One refused DTE refuses the whole file (ReceptionRefused with the reason and which document):
 * a file is stored whole or not at all. What comes back holds each DTE's own XML text.
 */
import { cutOutDtes, verifyDte, verifyEnvioDte, type EnvioDocumentVerification } from '@dte/engine';
import type { Element } from '@xmldom/xmldom';
import { ReceptionRefused, screenXml, type XmlLimits } from './safe-xml';

export interface ReceivedDocument {
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  razonSocialEmisor: string | null;
  rutReceptor: string;
  fchEmis: string;
  mntNeto: number;
  mntExe: number;
  iva: number;
  mntTotal: number;
  /** the DTE's own text (`<DTE …>…</DTE>`), as received, Latin-1 */
  xml: Buffer;
}

export interface ReadReceivedOptions {
  /** the receiving company's RUT (`76086428-5`) */
  rutReceptor: string;
  limits?: Partial<XmlLimits>;
  /**
   * The SII's CAF-signing public keys of the environment, by IDK (PEM: public key or
   * certificate). Required: a CAF whose IDK has no key here, or whose FRMA does not verify, is
   * `caf_invalido` (an empty map refuses every file; nothing is stored unverified).
   */
  siiPublicKeys: Record<string, string>;
  /** most DTEs in one file (the SII's own limit is 2000 per EnvioDTE) */
  maxDocuments?: number;
}

export function readReceivedXml(bytes: Buffer, opts: ReadReceivedOptions): ReceivedDocument[] {
  const { text, doc } = screenXml(bytes, opts.limits);
  const root = doc.documentElement!;
  const me = normRut(opts.rutReceptor);
  const keys = { siiPublicKeys: opts.siiPublicKeys };
  let checks: EnvioDocumentVerification[];
  if (root.localName === 'EnvioDTE') {
    const v = safely(() => verifyEnvioDte(text, keys));
    if (!v.envelopeSignature.valid)
      throw new ReceptionRefused(
        'firma_sobre_invalida',
        `envelope signature: ${v.envelopeSignature.error ?? 'invalid'}`,
      );
    if (normRut(v.caratula.rutReceptor) !== me)
      throw new ReceptionRefused(
        'sobre_para_otra_empresa',
        `the envelope is addressed to ${v.caratula.rutReceptor}, not to ${opts.rutReceptor}`,
      );
    checks = v.documents;
  } else if (root.localName === 'DTE') {
    checks = [safely(() => verifyDte(text, keys))];
  } else {
    throw new ReceptionRefused(
      'raiz_no_admitida',
      `root element ${root.localName}: expected EnvioDTE or DTE`,
    );
  }
  if (checks.length === 0) throw new ReceptionRefused('sin_documentos', 'the file holds no DTE');
  const max = opts.maxDocuments ?? 2000;
  if (checks.length > max) throw new ReceptionRefused('demasiados_documentos', `more than ${max} DTEs`);
  const texts = cutOutDtes(text);
  return checks.map((c, index) => {
    const where = { index, tipoDte: c.tipoDte, folio: c.folio };
    if (normRut(c.rutReceptor) !== me)
      throw new ReceptionRefused(
        'dte_para_otra_empresa',
        `DTE ${index + 1} (type ${c.tipoDte} folio ${c.folio}) is addressed to ${c.rutReceptor}, not to ${opts.rutReceptor}`,
        where,
      );
    if (!c.signatureValid)
      throw new ReceptionRefused(
        'firma_dte_invalida',
        `DTE ${index + 1}: ${c.signatureError ?? 'signature invalid'}`,
        where,
      );
    if (!c.tedValid)
      throw new ReceptionRefused('ted_invalido', `DTE ${index + 1}: ${c.tedError ?? 'TED invalid'}`, where);
    if (c.cafSignatureValid !== true)
      throw new ReceptionRefused(
        'caf_invalido',
        `DTE ${index + 1}: the CAF is not signed by the SII (${c.cafError ?? 'not verified'})`,
        where,
      );
    if (normRut(c.caf.rutEmisor) !== normRut(c.rutEmisor))
      throw new ReceptionRefused(
        'caf_invalido',
        `DTE ${index + 1}: the CAF was granted to ${c.caf.rutEmisor}, not to the issuer ${c.rutEmisor}`,
        where,
      );
    if (!c.totalsValid)
      throw new ReceptionRefused(
        'totales_invalidos',
        `DTE ${index + 1}: ${c.totalsError ?? 'totals invalid'}`,
        where,
      );
    const dteText = texts[index] as string;
    const totals = readTotals(root.localName === 'DTE' ? root : undefined, dteText, screenOpts(opts));
    return {
      tipoDte: c.tipoDte,
      folio: c.folio,
      rutEmisor: normRut(c.rutEmisor),
      razonSocialEmisor: totals.razonSocial,
      rutReceptor: normRut(c.rutReceptor),
      fchEmis: c.fchEmis,
      mntNeto: totals.neto,
      mntExe: totals.exe,
      iva: totals.iva,
      mntTotal: c.mntTotal,
      xml: Buffer.from(dteText, 'latin1'),
    };
  });
}

function screenOpts(opts: ReadReceivedOptions): Partial<XmlLimits> | undefined {
  return opts.limits;
}

function readTotals(
  lone: Element | undefined,
  dteText: string,
  limits: Partial<XmlLimits> | undefined,
): { neto: number; exe: number; iva: number; razonSocial: string | null } {
  const dte = lone ?? screenXml(Buffer.from(dteText, 'latin1'), limits).doc.documentElement!;
  const enc = find(dte, ['*', 'Encabezado']);
  const totales = enc ? find(enc, ['Totales']) : undefined;
  const num = (name: string) => Number(totales ? (find(totales, [name])?.textContent ?? 0) : 0) || 0;
  const rzn = enc ? (find(enc, ['Emisor', 'RznSoc']) ?? find(enc, ['Emisor', 'RznSocEmisor'])) : undefined;
  return { neto: num('MntNeto'), exe: num('MntExe'), iva: num('IVA'), razonSocial: rzn?.textContent ?? null };
}

function find(el: Element, path: string[]): Element | undefined {
  let cur: Element | undefined = el;
  for (const name of path) {
    if (!cur) return undefined;
    const kids: Element[] = [];
    for (let i = 0; i < cur.childNodes.length; i++) {
      const k = cur.childNodes[i];
      if (k && k.nodeType === 1) kids.push(k as Element);
    }
    cur = kids.find((k) => (name === '*' ? k.localName !== 'Signature' : k.localName === name));
  }
  return cur;
}

function safely<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new ReceptionRefused('xml_mal_formado', (err as Error).message);
  }
}

/** `76.086.428-5` / `76086428-5` / `76086428-k` → `76086428-5` / `…-K` */
export function normRut(rut: string): string {
  return rut.replace(/\./g, '').trim().toUpperCase();
}
