/**
 * Documents made without @dte/engine: certificates by openssl, XML signatures by xmlsec1, the
 * TED's FRMT by `openssl dgst -sha1 -sign`. What these produce is what any other software
 * would send; the simulator must answer it as the SII would.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const DSIG_TEMPLATE = (uri: string, transform: string) =>
  '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>' +
  '<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
  '<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>' +
  `<Reference URI="${uri}"><Transforms><Transform Algorithm="${transform}"/></Transforms>` +
  '<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue/></Reference></SignedInfo>' +
  '<SignatureValue/><KeyInfo><KeyValue/><X509Data><X509Certificate/></X509Data></KeyInfo></Signature>';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';

export interface OpensslIdentity {
  key: string;
  cert: string;
}

/** a self-signed certificate with the RUT in SAN otherName 1.3.6.1.4.1.8321.1, as Chilean CAs do */
export function opensslIdentity(dir: string, rut: string): OpensslIdentity {
  const key = path.join(dir, `${rut}.key.pem`);
  const cert = path.join(dir, `${rut}.cert.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '5',
      '-subj',
      `/CN=Firmante ${rut}/serialNumber=${rut}`,
      '-addext',
      `subjectAltName=otherName:1.3.6.1.4.1.8321.1;IA5STRING:${rut}`,
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}

function xmlsec1Sign(
  dir: string,
  name: string,
  xml: string,
  id: OpensslIdentity,
  idAttr?: string,
  nodeXpath?: string,
): string {
  const tmpl = path.join(dir, `${name}.tmpl.xml`);
  const out = path.join(dir, `${name}.signed.xml`);
  writeFileSync(tmpl, xml, 'latin1');
  const args = ['--sign', '--privkey-pem', `${id.key},${id.cert}`];
  if (idAttr) args.push(`--id-attr:ID`, idAttr);
  // the envelope holds the DTEs' signatures too: sign the root's own Signature
  if (nodeXpath) args.push('--node-xpath', nodeXpath);
  execFileSync('xmlsec1', [...args, '--output', out, tmpl], { stdio: 'ignore' });
  return readFileSync(out, 'latin1');
}

export function signSeedWithXmlsec1(dir: string, seed: string, id: OpensslIdentity): string {
  return xmlsec1Sign(
    dir,
    'seed',
    `<?xml version="1.0"?>\n<getToken><item><Semilla>${seed}</Semilla></item>${DSIG_TEMPLATE('', ENVELOPED)}</getToken>\n`,
    id,
  );
}

export interface IndependentDte {
  folio: number;
  fchEmis: string;
  rutEmisor: string;
  rutReceptor: string;
  neto: number;
  /** the CAF file as the simulator granted it */
  cafXml: string;
  /** sign the TED with this PEM instead of the CAF's RSASK */
  tedKeyPem?: string;
  timestamp: string;
}

/** One DTE: TED signed by openssl with the CAF key, DTE signed standalone by xmlsec1. */
export function independentDte(dir: string, d: IndependentDte, id: OpensslIdentity): string {
  const iva = Math.round(d.neto * 0.19);
  const total = d.neto + iva;
  const cafEl = /<CAF version="1.0">[\s\S]*?<\/CAF>/.exec(d.cafXml)![0].replace(/>\s+</g, '><');
  const rsask = /<RSASK>([\s\S]*?)<\/RSASK>/.exec(d.cafXml)![1].trim();
  const dd =
    `<DD><RE>${d.rutEmisor}</RE><TD>33</TD><F>${d.folio}</F><FE>${d.fchEmis}</FE><RR>${d.rutReceptor}</RR>` +
    `<RSR>CLIENTE LTDA</RSR><MNT>${total}</MNT><IT1>Servicio</IT1>${cafEl}<TSTED>${d.timestamp}</TSTED></DD>`;
  const keyFile = path.join(dir, `ted-${d.folio}.pem`);
  writeFileSync(keyFile, `${d.tedKeyPem ?? rsask}\n`);
  const ddFile = path.join(dir, `dd-${d.folio}.txt`);
  writeFileSync(ddFile, dd, 'latin1');
  const frmt = execFileSync('openssl', ['dgst', '-sha1', '-sign', keyFile, ddFile]).toString('base64');
  const docId = `F${d.folio}T33`;
  const documento =
    `<Documento ID="${docId}"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>${d.folio}</Folio><FchEmis>${d.fchEmis}</FchEmis></IdDoc>` +
    `<Emisor><RUTEmisor>${d.rutEmisor}</RUTEmisor><RznSoc>EMPRESA INDEPENDIENTE</RznSoc><GiroEmis>Servicios</GiroEmis>` +
    '<Acteco>620200</Acteco><DirOrigen>Calle 2</DirOrigen><CmnaOrigen>Santiago</CmnaOrigen></Emisor>' +
    `<Receptor><RUTRecep>${d.rutReceptor}</RUTRecep><RznSocRecep>CLIENTE LTDA</RznSocRecep><GiroRecep>Comercio</GiroRecep>` +
    '<DirRecep>Calle 3</DirRecep><CmnaRecep>Providencia</CmnaRecep></Receptor>' +
    `<Totales><MntNeto>${d.neto}</MntNeto><TasaIVA>19</TasaIVA><IVA>${iva}</IVA><MntTotal>${total}</MntTotal></Totales></Encabezado>` +
    `<Detalle><NroLinDet>1</NroLinDet><NmbItem>Servicio</NmbItem><QtyItem>1</QtyItem><PrcItem>${d.neto}</PrcItem><MontoItem>${d.neto}</MontoItem></Detalle>` +
    `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED><TmstFirma>${d.timestamp}</TmstFirma></Documento>`;
  const signed = xmlsec1Sign(
    dir,
    `dte-${d.folio}`,
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0">${documento}${DSIG_TEMPLATE(`#${docId}`, C14N)}</DTE>\n`,
    id,
    'http://www.sii.cl/SiiDte:Documento',
  );
  return /<DTE[\s\S]*<\/DTE>/.exec(signed)![0];
}

/** The EnvioDTE around DTE texts, SetDTE signed in place by xmlsec1. */
export function independentEnvio(
  dir: string,
  dtes: string[],
  c: { rutEmisor: string; rutEnvia: string; fchResol: string; nroResol: number; timestamp: string },
  id: OpensslIdentity,
): Buffer {
  const caratula =
    `<Caratula version="1.0"><RutEmisor>${c.rutEmisor}</RutEmisor><RutEnvia>${c.rutEnvia}</RutEnvia>` +
    `<RutReceptor>60803000-K</RutReceptor><FchResol>${c.fchResol}</FchResol><NroResol>${c.nroResol}</NroResol>` +
    `<TmstFirmaEnv>${c.timestamp}</TmstFirmaEnv><SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>${dtes.length}</NroDTE></SubTotDTE></Caratula>`;
  const signed = xmlsec1Sign(
    dir,
    'envio',
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0">' +
      `<SetDTE ID="SetDoc">${caratula}${dtes.join('')}</SetDTE>${DSIG_TEMPLATE('#SetDoc', C14N)}</EnvioDTE>\n`,
    id,
    'http://www.sii.cl/SiiDte:SetDTE',
    "/*/*[local-name()='Signature']",
  );
  return Buffer.from(signed, 'latin1');
}
