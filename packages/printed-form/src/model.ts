import { DOMParser, type Element } from '@xmldom/xmldom';
import { ServiceError } from '@dte/error-catalog';

/**
 * What the printed form shows, read from the signed XML (the source of truth) or, for a draft
 * preview, from the engine's document model (same SII element names). Amounts stay the strings
 * or numbers the document holds; the layout formats them.
 */
export interface PrintModel {
  tipo: number;
  /** null on a draft (no folio taken) */
  folio: number | null;
  fchEmis: string;
  fchVenc?: string;
  fmaPago?: number;
  fmaPagExp?: number;
  pagos: { fecha: string; monto: string; glosa?: string }[];
  emisor: {
    rut: string;
    razonSocial: string;
    giro: string;
    acteco: string[];
    direccion?: string;
    comuna?: string;
    ciudad?: string;
    sucursal?: string;
  };
  receptor: {
    rut: string;
    razonSocial: string;
    giro?: string;
    direccion?: string;
    comuna?: string;
    ciudad?: string;
    correo?: string;
    extranjero?: string;
  };
  despacho?: {
    indTraslado?: string;
    tipoDespacho?: string;
    patente?: string;
    rutTransportista?: string;
    chofer?: string;
    destino?: string;
  };
  exportacion?: { lines: string[] };
  items: {
    linea: string;
    codigo?: string;
    nombre: string;
    descripcion?: string;
    cantidad?: string;
    unidad?: string;
    precio?: string;
    descuento?: string;
    exento: boolean;
    monto: string;
  }[];
  descuentos: { tipo: string; glosa?: string; valor: string; unidad: string }[];
  referencias: {
    tipoDoc: string;
    folio: string;
    fecha: string;
    codRef?: string;
    razon?: string;
    global: boolean;
  }[];
  totales: {
    moneda?: string;
    neto?: string;
    exento?: string;
    tasaIva?: string;
    iva?: string;
    impuestos: { tipo: string; tasa?: string; monto: string }[];
    ivaNoRet?: string;
    total: string;
  };
  otraMoneda?: {
    moneda: string;
    tipoCambio: string;
    neto?: string;
    exento?: string;
    iva?: string;
    total: string;
  };
  /** the <TED>…</TED> text exactly as in the signed document; absent on a draft */
  ted?: string;
  tmstFirma?: string;
}

/** A loose tree of SII element names: what both the parsed XML and the engine's model look like. */
type Tree = { [name: string]: Tree | Tree[] | string | number | undefined | Tree[keyof Tree] };

const REPEATED = new Set([
  'Detalle',
  'Referencia',
  'DscRcgGlobal',
  'MntPagos',
  'ImptoReten',
  'CdgItem',
  'Acteco',
  'TipoBultos',
]);

function hasElementChild(el: Element): boolean {
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) return true;
  return false;
}

function elementTree(el: Element): Tree {
  const out: Tree = {};
  let hasChild = false;
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType !== 1) continue;
    hasChild = true;
    const child = n as Element;
    const name = child.localName ?? child.nodeName;
    const value = hasElementChild(child) ? elementTree(child) : (child.textContent ?? '');
    if (REPEATED.has(name)) {
      const list = (out[name] as unknown[] | undefined) ?? [];
      list.push(value);
      out[name] = list as Tree[];
    } else {
      out[name] = value as Tree;
    }
  }
  return hasChild ? out : {};
}

const sub = (t: unknown, name: string): Tree | undefined => {
  const v = t && typeof t === 'object' ? (t as Tree)[name] : undefined;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Tree) : undefined;
};
const list = (t: unknown, name: string): Tree[] => {
  const v = t && typeof t === 'object' ? (t as Tree)[name] : undefined;
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]) as Tree[];
};
const text = (t: unknown, name: string): string | undefined => {
  const v = t && typeof t === 'object' ? (t as Tree)[name] : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
};
const req = (t: unknown, name: string): string => text(t, name) ?? '';

/** The exact `<TED …>…</TED>` text of a signed DTE (the bytes the timbre encodes). */
export function tedOf(signedXml: string): string {
  const m = /<TED[\s>][\s\S]*?<\/TED>/.exec(signedXml);
  if (!m) throw new ServiceError('dte.print.measurement_failed', 'The signed document holds no TED.');
  return m[0];
}

/** Reads the printed form's content from a signed DTE as stored (`<DTE>` or inside an EnvioDTE). */
export function modelFromSignedXml(signedXml: string): PrintModel {
  const dom = new DOMParser().parseFromString(signedXml, 'text/xml');
  const doc = ['Documento', 'Exportaciones']
    .map((n) => dom.getElementsByTagNameNS('*', n)[0] ?? dom.getElementsByTagName(n)[0])
    .find(Boolean);
  if (!doc) throw new ServiceError('dte.print.measurement_failed', 'The signed XML holds no document.');
  const tree = elementTree(doc);
  const model = modelFromTree(tree);
  model.ted = tedOf(signedXml);
  const tmst = text(tree, 'TmstFirma');
  if (tmst) model.tmstFirma = tmst;
  return model;
}

/**
 * Reads the content from the engine's document model (a draft preview: built exactly as emission
 * builds it, not stamped, not signed). `folio` is shown as absent.
 */
export function modelFromDocument(document: unknown): PrintModel {
  const model = modelFromTree(JSON.parse(JSON.stringify(document)) as Tree);
  model.folio = null;
  return model;
}

function modelFromTree(d: Tree): PrintModel {
  const enc = sub(d, 'Encabezado');
  const id = sub(enc, 'IdDoc');
  const em = sub(enc, 'Emisor');
  const re = sub(enc, 'Receptor');
  const tr = sub(enc, 'Transporte');
  const tot = sub(enc, 'Totales');
  const om = sub(enc, 'OtraMoneda');
  const tipo = Number(req(id, 'TipoDTE'));
  const ext = sub(re, 'Extranjero');
  const model: PrintModel = {
    tipo,
    folio: Number(req(id, 'Folio')),
    fchEmis: req(id, 'FchEmis'),
    pagos: list(id, 'MntPagos').map((p) => ({
      fecha: req(p, 'FchPago'),
      monto: req(p, 'MntPago'),
      ...opt('glosa', text(p, 'GlosaPagos')),
    })),
    emisor: {
      rut: req(em, 'RUTEmisor'),
      // a boleta (EnvioBOLETA_v11.xsd) names them RznSocEmisor and GiroEmisor
      razonSocial: text(em, 'RznSoc') ?? req(em, 'RznSocEmisor'),
      giro: text(em, 'GiroEmis') ?? req(em, 'GiroEmisor'),
      acteco: actecos(em),
      ...opt('direccion', text(em, 'DirOrigen')),
      ...opt('comuna', text(em, 'CmnaOrigen')),
      ...opt('ciudad', text(em, 'CiudadOrigen')),
      ...opt('sucursal', text(em, 'Sucursal')),
    },
    receptor: {
      rut: req(re, 'RUTRecep'),
      razonSocial: req(re, 'RznSocRecep'),
      ...opt('giro', text(re, 'GiroRecep')),
      ...opt('direccion', text(re, 'DirRecep')),
      ...opt('comuna', text(re, 'CmnaRecep')),
      ...opt('ciudad', text(re, 'CiudadRecep')),
      ...opt('correo', text(re, 'CorreoRecep')),
      ...opt(
        'extranjero',
        ext ? [text(ext, 'NumId'), text(ext, 'Nacionalidad')].filter(Boolean).join(' / ') : undefined,
      ),
    },
    items: list(d, 'Detalle').map((it) => {
      const codes = list(it, 'CdgItem')
        .map((c) => text(c, 'VlrCodigo'))
        .filter(Boolean);
      const dscto = text(it, 'DescuentoMonto');
      return {
        linea: req(it, 'NroLinDet'),
        ...opt('codigo', codes.length ? codes.join(', ') : undefined),
        nombre: req(it, 'NmbItem'),
        ...opt('descripcion', text(it, 'DscItem')),
        ...opt('cantidad', text(it, 'QtyItem')),
        ...opt('unidad', text(it, 'UnmdItem')),
        ...opt('precio', text(it, 'PrcItem')),
        ...opt('descuento', dscto),
        exento: text(it, 'IndExe') !== undefined,
        monto: req(it, 'MontoItem'),
      };
    }),
    descuentos: list(d, 'DscRcgGlobal').map((g) => ({
      tipo: req(g, 'TpoMov') === 'R' ? 'Recargo' : 'Descuento',
      ...opt('glosa', text(g, 'GlosaDR')),
      valor: req(g, 'ValorDR'),
      unidad: req(g, 'TpoValor'),
    })),
    referencias: list(d, 'Referencia').map((r) => ({
      tipoDoc: req(r, 'TpoDocRef'),
      folio: req(r, 'FolioRef'),
      fecha: req(r, 'FchRef'),
      ...opt('codRef', text(r, 'CodRef')),
      ...opt('razon', text(r, 'RazonRef')),
      global: text(r, 'IndGlobal') === '1',
    })),
    totales: {
      ...opt('moneda', text(tot, 'TpoMoneda')),
      ...opt('neto', text(tot, 'MntNeto')),
      ...opt('exento', text(tot, 'MntExe')),
      ...opt('tasaIva', text(tot, 'TasaIVA')),
      ...opt('iva', text(tot, 'IVA')),
      impuestos: list(tot, 'ImptoReten').map((i) => ({
        tipo: req(i, 'TipoImp'),
        ...opt('tasa', text(i, 'TasaImp')),
        monto: req(i, 'MontoImp'),
      })),
      ...opt('ivaNoRet', text(tot, 'IVANoRet')),
      total: req(tot, 'MntTotal'),
    },
  };
  for (const [k, v] of [
    ['fchVenc', text(id, 'FchVenc')],
    ['fmaPago', text(id, 'FmaPago')],
    ['fmaPagExp', text(id, 'FmaPagExp')],
  ] as const) {
    if (v !== undefined) (model as unknown as Record<string, unknown>)[k] = k === 'fchVenc' ? v : Number(v);
  }
  if (om) {
    model.otraMoneda = {
      moneda: req(om, 'TpoMoneda'),
      tipoCambio: req(om, 'TpoCambio'),
      ...opt('neto', text(om, 'MntNetoOtrMnda')),
      ...opt('exento', text(om, 'MntExeOtrMnda')),
      ...opt('iva', text(om, 'IVAOtrMnda')),
      total: req(om, 'MntTotOtrMnda'),
    };
  }
  const indTraslado = text(id, 'IndTraslado');
  if (tr || indTraslado) {
    const chofer = sub(tr, 'Chofer');
    const despacho = {
      ...opt('indTraslado', indTraslado),
      ...opt('tipoDespacho', text(id, 'TipoDespacho')),
      ...opt('patente', text(tr, 'Patente')),
      ...opt('rutTransportista', text(tr, 'RUTTrans')),
      ...opt('chofer', chofer ? `${req(chofer, 'NombreChofer')} (${req(chofer, 'RUTChofer')})` : undefined),
      ...opt(
        'destino',
        tr
          ? [text(tr, 'DirDest'), text(tr, 'CmnaDest'), text(tr, 'CiudadDest')].filter(Boolean).join(', ')
          : '',
      ),
    };
    // an export's Transporte may hold only customs data (Aduana): no transport section then
    if (Object.keys(despacho).length > 0) model.despacho = despacho;
  }
  const aduana = sub(tr, 'Aduana');
  if (aduana) {
    const lines: string[] = [];
    for (const [label, key] of [
      ['Modalidad de venta', 'CodModVenta'],
      ['Cláusula de venta', 'CodClauVenta'],
      ['Total cláusula', 'TotClauVenta'],
      ['Vía de transporte', 'CodViaTransp'],
      ['Puerto de embarque', 'CodPtoEmbarque'],
      ['Puerto de desembarque', 'CodPtoDesemb'],
      ['País receptor', 'CodPaisRecep'],
      ['País destino', 'CodPaisDestin'],
      ['Flete', 'MntFlete'],
      ['Seguro', 'MntSeguro'],
    ] as const) {
      const v = text(aduana, key);
      if (v !== undefined) lines.push(`${label}: ${v}`);
    }
    model.exportacion = { lines };
  }
  return model;
}

function actecos(em: Tree | undefined): string[] {
  return list(em, 'Acteco').map((a) => String(a));
}

function opt<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined || value === '' ? {} : ({ [key]: value } as Record<K, string>);
}
