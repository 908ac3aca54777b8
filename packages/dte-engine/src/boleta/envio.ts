import { ServiceError } from '@dte/error-catalog';

import type { SigningCredential } from '../crypto/certificate';
import { signingMaterial } from '../crypto/keys';
import { normalizeRut } from '../crypto/rut';
import { buildSignature } from '../crypto/xmldsig';
import { assertCredentialValidAt } from '../credential-checks';
import { canonicalSetDte, fastCanonicalSetDte, SII_RUT } from '../envio';
import { SII_NS } from '../xml/dte-xml';
import { assertLatin1, el, siiTimestamp } from '../xml/text';

/** EnvioBOLETA_v11.xsd: at most 500 DTE per SetDTE and 2 SubTotDTE (39 and 41). */
export const MAX_BOLETAS_PER_ENVIO = 500;

export interface EnvioBoletaOptions {
  rutEmisor: string;
  rutEnvia: string;
  fchResol: string;
  nroResol: number;
  credential: SigningCredential;
  timestamp: Date;
  setId?: string;
}

function envioError(message: string, detail?: Record<string, unknown>): ServiceError {
  return new ServiceError('validation_failed', message, {
    issues: [{ path: 'envio', message }],
    ...(detail ? { detail } : {}),
  });
}

/**
 * The EnvioBOLETA as ISO-8859-1 bytes, built like buildEnvioDte (Carátula, the signed boletas
 * inserted unchanged, the SetDTE signed in place, no xmlns:xsi on the root) with the boleta
 * envelope's own bounds: 1-500 boletas of types 39/41 only, one issuer.
 */
export function buildEnvioBoleta(signedBoletas: string[], opts: EnvioBoletaOptions): Buffer {
  if (signedBoletas.length === 0) throw envioError('an EnvioBOLETA needs at least one boleta');
  if (signedBoletas.length > MAX_BOLETAS_PER_ENVIO)
    throw envioError(
      `an EnvioBOLETA holds at most ${MAX_BOLETAS_PER_ENVIO} boletas, got ${signedBoletas.length}`,
      {
        max: MAX_BOLETAS_PER_ENVIO,
        count: signedBoletas.length,
      },
    );
  const rutEmisor = normalizeRut(opts.rutEmisor);
  const rutEnvia = normalizeRut(opts.rutEnvia);
  if (!rutEmisor || !rutEnvia) throw envioError('rutEmisor and rutEnvia must be RUTs');
  if (rutEnvia !== opts.credential.info.rut)
    throw new ServiceError('cert_subject_mismatch', `RutEnvia ${rutEnvia} is not the certificate holder`, {
      detail: { rutEnvia, certificateRut: opts.credential.info.rut },
    });
  if (!/^\d{4}-\d{2}-\d{2}$/.test(opts.fchResol)) throw envioError('fchResol must be YYYY-MM-DD');
  if (!Number.isInteger(opts.nroResol) || opts.nroResol < 0 || opts.nroResol > 999999)
    throw envioError('nroResol must be an integer of at most 6 digits');
  const setId = opts.setId ?? 'SetDoc';
  if (!/^[A-Za-z_][\w.-]*$/.test(setId)) throw envioError(`setId ${setId} is not an XML ID`);
  assertCredentialValidAt(opts.credential, opts.timestamp);

  const counts = new Map<number, number>();
  const dtes = signedBoletas.map((raw, i) => {
    const dte = raw.replace(/^\uFEFF?\s*(<\?xml[^>]*\?>)?\s*/, '').trimEnd();
    if (!dte.startsWith(`<DTE xmlns="${SII_NS}"`) || !dte.endsWith('</DTE>'))
      throw envioError(`boleta ${i + 1} is not a <DTE xmlns="${SII_NS}"> element`);
    const tipo = Number(/<TipoDTE>\s*(\d+)\s*<\/TipoDTE>/.exec(dte)?.[1]);
    if (tipo !== 39 && tipo !== 41)
      throw envioError(`document ${i + 1} is type ${tipo}, not a boleta (39/41)`);
    const emisor = /<RUTEmisor>\s*([^<]+?)\s*<\/RUTEmisor>/.exec(dte)?.[1] ?? '';
    if (normalizeRut(emisor) !== rutEmisor)
      throw new ServiceError(
        'emisor_rut_mismatch',
        `boleta ${i + 1} is issued by ${emisor}, not ${rutEmisor}`,
        {
          detail: { rutEmisor, documentRutEmisor: emisor, index: i },
        },
      );
    assertLatin1(dte, 'DTE');
    counts.set(tipo, (counts.get(tipo) ?? 0) + 1);
    return dte;
  });
  const caratula =
    '<Caratula version="1.0">' +
    el('RutEmisor', rutEmisor) +
    el('RutEnvia', rutEnvia) +
    el('RutReceptor', SII_RUT) +
    el('FchResol', opts.fchResol) +
    el('NroResol', opts.nroResol) +
    el('TmstFirmaEnv', siiTimestamp(opts.timestamp)) +
    [...counts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([tipo, n]) => `<SubTotDTE>${el('TpoDTE', tipo)}${el('NroDTE', n)}</SubTotDTE>`)
      .join('') +
    '</Caratula>';
  const setDte = `<SetDTE ID="${setId}">${caratula}${dtes.join('')}</SetDTE>`;
  const root = `<EnvioBOLETA xmlns="${SII_NS}" version="1.0">`;
  const canonical = fastCanonicalSetDte(setId, caratula, dtes) ?? canonicalSetDte(root, setDte);
  const signature = buildSignature(canonical, `#${setId}`, signingMaterial(opts.credential));
  const xml = `<?xml version="1.0" encoding="ISO-8859-1"?>\n${root}${setDte}${signature}</EnvioBOLETA>`;
  return Buffer.from(xml, 'latin1');
}
