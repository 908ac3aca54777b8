import PDFDocument from 'pdfkit';
import { ServiceError } from '@dte/error-catalog';
import { dia } from '@dte/es-cl';
import type { PrintModel } from './model';
import {
  ACUSE_LEGAL_TEXT,
  CEDIBLE_LABEL,
  CEDIBLE_TIPOS_TEXT,
  COD_REF_NAMES,
  DOCUMENT_NAMES,
  DRAFT_LABEL,
  FORMA_PAGO_NAMES,
  REFERENCE_NAMES,
  TRASLADO_NAMES,
} from './names';
import { drawTimbre, mmToPt, timbreSymbol, type TimbreSymbol } from './timbre';

/** The RUT a boleta carries for a buyer without one (SII: "consumidor final"). */
const ANONYMOUS_BUYER_RUT = '66666666-6';

/** Items a printed form holds at most (spec, Limits: `dte.print.items_limit`). */
export const MAX_PRINTED_ITEMS = 40;

export type PrintCopy = 'original' | 'cedible';
export type PrintLayout = 'letter' | 'thermal';

export interface PrintOptions {
  copy?: PrintCopy;
  layout?: PrintLayout;
  /** the SII unit of the emitter's domicile, printed "S.I.I. - <oficina>" under the box */
  oficinaSii: string;
  /** the SII resolution authorizing the emitter in the document's environment */
  resolucion: { numero: number; fecha: string } | null;
  /** a preview: no folio, no timbre, marked BORRADOR — SIN VALIDEZ TRIBUTARIA */
  draft?: boolean;
  /** fixed PDF CreationDate (a repeat renders the same bytes) */
  creationDate?: Date;
}

interface Geometry {
  width: number;
  margin: number;
  /** font sizes */
  base: number;
  small: number;
  title: number;
  thermal: boolean;
  timbreBox: { maxWidthMm: number; maxHeightMm: number };
}

const LETTER: Geometry = {
  width: 612,
  margin: 36,
  base: 8.5,
  small: 7,
  title: 11,
  thermal: false,
  timbreBox: { maxWidthMm: 85, maxHeightMm: 38 },
};
const LETTER_HEIGHT = 792;
const THERMAL: Geometry = {
  width: mmToPt(80),
  margin: mmToPt(4),
  base: 7.5,
  small: 6.5,
  title: 9,
  thermal: true,
  timbreBox: { maxWidthMm: 70, maxHeightMm: 38 },
};
/** longest thermal roll a document may take */
const THERMAL_MAX_HEIGHT = 14_000;
const RED = '#c8102e';
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';

/** 76123456-7 → 76.123.456-7 */
export function formatRut(rut: string): string {
  const m = /^(\d+)-([\dkK])$/.exec(rut.trim());
  if (!m) return rut;
  return `${m[1].replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${m[2].toUpperCase()}`;
}

/** 11900 → 11.900; 20.5 → 20,5 (Chilean separators; decimals as the document holds them) */
export function formatAmount(value: string | undefined): string {
  if (value === undefined || value === '') return '';
  const [int, dec] = value.split('.');
  const sign = int.startsWith('-') ? '-' : '';
  const digits = int.replace('-', '').replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}${digits}${dec ? `,${dec}` : ''}`;
}

/**
 * Renders the printed form of one document. Throws `dte.print.items_limit` above 40 items and
 * `dte.print.overflow` when a part cannot fit a page (or the thermal roll).
 */
export async function renderPrintedForm(model: PrintModel, opts: PrintOptions): Promise<Buffer> {
  if (!DOCUMENT_NAMES[model.tipo]) {
    throw new ServiceError('dte.tipo_not_supported', `Type ${model.tipo} has no printed form here.`);
  }
  if (model.items.length > MAX_PRINTED_ITEMS) {
    throw new ServiceError(
      'dte.print.items_limit',
      `The document has ${model.items.length} items; a printed form holds at most ${MAX_PRINTED_ITEMS}.`,
      { detail: { count: model.items.length, max: MAX_PRINTED_ITEMS } },
    );
  }
  const copy = opts.copy ?? 'original';
  if (copy === 'cedible' && !CEDIBLE_LABEL[model.tipo]) {
    throw new ServiceError(
      'validation_failed',
      `Type ${model.tipo} has no CEDIBLE copy (only ${CEDIBLE_TIPOS_TEXT}).`,
      {
        issues: [{ path: 'copy', message: `cedible applies to types ${CEDIBLE_TIPOS_TEXT}` }],
      },
    );
  }
  if (!opts.draft && !model.ted) {
    throw new ServiceError('dte.print.measurement_failed', 'The document has no TED to print.');
  }
  const geo = opts.layout === 'thermal' ? THERMAL : LETTER;
  const sym = opts.draft ? undefined : timbreSymbol(model.ted!, geo.timbreBox);
  if (!geo.thermal) return draw(model, opts, copy, geo, LETTER_HEIGHT, sym);
  // a thermal roll is as long as its content: measure once, then draw on a page of that length
  const height = await measureThermal(model, opts, copy, sym);
  return draw(model, opts, copy, geo, height, sym);
}

async function measureThermal(
  model: PrintModel,
  opts: PrintOptions,
  copy: PrintCopy,
  sym: TimbreSymbol | undefined,
): Promise<number> {
  const doc = new PDFDocument({ size: [THERMAL.width, THERMAL_MAX_HEIGHT], margin: 0, autoFirstPage: true });
  const end = new Layout(doc, model, opts, copy, THERMAL, THERMAL_MAX_HEIGHT, sym).run();
  doc.end();
  return Math.ceil(end + THERMAL.margin);
}

function draw(
  model: PrintModel,
  opts: PrintOptions,
  copy: PrintCopy,
  geo: Geometry,
  height: number,
  sym: TimbreSymbol | undefined,
): Promise<Buffer> {
  const doc = new PDFDocument({
    size: [geo.width, height],
    margin: 0,
    bufferPages: true,
    info: {
      Title: `${DOCUMENT_NAMES[model.tipo]} ${model.folio ?? 'BORRADOR'}`,
      Author: model.emisor.razonSocial,
      Producer: '@dte/printed-form',
      Creator: '@dte/printed-form',
      CreationDate: opts.creationDate ?? new Date(0),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  new Layout(doc, model, opts, copy, geo, height, sym).run();
  doc.end();
  return done;
}

/** One pass of layout over a pdfkit document; `run` answers the y where the content ended. */
class Layout {
  private y: number;
  private readonly left: number;
  private readonly right: number;
  private readonly inner: number;
  private page = 1;

  constructor(
    private readonly doc: PDFKit.PDFDocument,
    private readonly m: PrintModel,
    private readonly opts: PrintOptions,
    private readonly copy: PrintCopy,
    private readonly g: Geometry,
    private readonly height: number,
    private readonly sym: TimbreSymbol | undefined,
  ) {
    this.left = g.margin;
    this.right = g.width - g.margin;
    this.inner = this.right - this.left;
    this.y = g.margin;
  }

  run(): number {
    if (this.opts.draft) this.watermark();
    this.header();
    this.dates();
    this.receptor();
    this.despacho();
    this.exportacion();
    this.items();
    this.descuentos();
    this.referencias();
    this.bottom();
    if (!this.g.thermal) this.pageNumbers();
    return this.y;
  }

  // ── helpers ──
  private font(bold: boolean, size: number) {
    this.doc.font(bold ? BOLD : FONT).fontSize(size);
    return this.doc;
  }

  private textHeight(s: string, width: number, bold = false, size = this.g.base): number {
    this.font(bold, size);
    return this.doc.heightOfString(s, { width });
  }

  private write(
    s: string,
    x: number,
    width: number,
    opts: { bold?: boolean; size?: number; align?: 'left' | 'right' | 'center' } = {},
  ) {
    const size = opts.size ?? this.g.base;
    this.font(opts.bold ?? false, size).fillColor('black');
    this.doc.text(s, x, this.y, { width, align: opts.align ?? 'left', lineBreak: true });
  }

  /** A line "label: value" across the inner width; advances y. */
  private field(label: string, value: string | undefined, x = this.left, width = this.inner) {
    if (value === undefined || value === '') return;
    const s = `${label}: ${value}`;
    const h = this.textHeight(s, width);
    this.ensure(h);
    this.write(s, x, width);
    this.y += h + 1;
  }

  private get bottomLimit(): number {
    // a roll is cut to its content (measured first): only its maximum length bounds it
    if (this.g.thermal) return THERMAL_MAX_HEIGHT - this.g.margin;
    return this.height - this.g.margin - 14;
  }

  /** Room for `h` more points on this page, or a new page (letter) / overflow (thermal). */
  private ensure(h: number) {
    if (this.y + h <= this.bottomLimit) return;
    if (this.g.thermal) {
      throw new ServiceError(
        'dte.print.overflow',
        'The document does not fit a thermal roll; use the letter layout.',
      );
    }
    const top = this.g.margin;
    if (h > this.bottomLimit - top - 40) {
      throw new ServiceError(
        'dte.print.overflow',
        'A part of the document is taller than a page; shorten it.',
      );
    }
    this.doc.addPage({ size: [this.g.width, this.height], margin: 0 });
    this.page += 1;
    if (this.opts.draft) this.watermark();
    this.y = top;
    this.continuationHeader();
  }

  private continuationHeader() {
    const s = `${this.m.emisor.razonSocial} · ${DOCUMENT_NAMES[this.m.tipo]} ${this.folioText()} (continuación)`;
    this.write(s, this.left, this.inner, { bold: true, size: this.g.small });
    this.y += this.textHeight(s, this.inner, true, this.g.small) + 6;
  }

  private folioText(): string {
    return this.m.folio === null ? 'SIN FOLIO' : `N° ${this.m.folio}`;
  }

  private rule() {
    this.ensure(4);
    this.doc
      .moveTo(this.left, this.y + 1)
      .lineTo(this.right, this.y + 1)
      .lineWidth(0.5)
      .strokeColor('#555')
      .stroke();
    this.y += 4;
  }

  private section(title: string) {
    const h = this.textHeight(title, this.inner, true);
    this.ensure(h + 12);
    this.y += 3;
    this.write(title, this.left, this.inner, { bold: true });
    this.y += h + 1;
  }

  // ── parts ──
  private watermark() {
    const d = this.doc;
    d.save();
    d.font(BOLD)
      .fontSize(this.g.thermal ? 14 : 30)
      .fillColor('#d00000')
      .fillOpacity(0.18);
    const cx = this.g.width / 2;
    const cy = Math.min(this.height, LETTER_HEIGHT) / 2;
    d.rotate(-35, { origin: [cx, cy] });
    d.text(DRAFT_LABEL, cx - 300, cy - 15, { width: 600, align: 'center', lineBreak: false });
    d.restore();
    d.fillOpacity(1);
  }

  /** Emitter data beside (letter) or under (thermal) the red box with RUT, name and folio. */
  private header() {
    const g = this.g;
    const boxW = g.thermal ? this.inner : 190;
    const boxX = this.right - boxW;
    const name = DOCUMENT_NAMES[this.m.tipo];
    const boxLines: [string, number][] = [
      [`R.U.T.: ${formatRut(this.m.emisor.rut)}`, g.title],
      [name, g.title],
      [this.opts.draft ? 'BORRADOR · SIN FOLIO' : this.folioText(), g.title],
    ];
    const pad = 8;
    const boxH =
      boxLines.reduce((h, [s, size]) => h + this.textHeight(s, boxW - 2 * pad, true, size) + 3, 0) +
      2 * pad -
      3;
    const top = this.y;
    const drawBox = (y: number) => {
      this.doc.lineWidth(1.5).strokeColor(RED).rect(boxX, y, boxW, boxH).stroke();
      let by = y + pad;
      for (const [s, size] of boxLines) {
        this.font(true, size).fillColor(RED);
        this.doc.text(s, boxX + pad, by, { width: boxW - 2 * pad, align: 'center' });
        by += this.textHeight(s, boxW - 2 * pad, true, size) + 3;
      }
      const office = `S.I.I. - ${this.opts.oficinaSii}`;
      this.font(true, g.base).fillColor(RED);
      this.doc.text(office, boxX, y + boxH + 3, { width: boxW, align: 'center' });
      this.doc.fillColor('black');
      return y + boxH + 3 + this.textHeight(office, boxW, true, g.base);
    };
    const e = this.m.emisor;
    const emitterLines = [
      e.giro,
      [e.direccion, e.comuna, e.ciudad].filter(Boolean).join(', '),
      e.sucursal ? `Sucursal: ${e.sucursal}` : '',
      e.acteco.length ? `Acteco: ${e.acteco.join(', ')}` : '',
    ].filter(Boolean);
    if (g.thermal) {
      this.y = drawBox(top) + 6;
      this.write(e.razonSocial, this.left, this.inner, { bold: true, size: g.title, align: 'center' });
      this.y += this.textHeight(e.razonSocial, this.inner, true, g.title) + 1;
      for (const l of emitterLines) {
        this.write(l, this.left, this.inner, { align: 'center' });
        this.y += this.textHeight(l, this.inner) + 1;
      }
    } else {
      const w = boxX - this.left - 12;
      this.write(e.razonSocial, this.left, w, { bold: true, size: g.title + 2 });
      this.y += this.textHeight(e.razonSocial, w, true, g.title + 2) + 2;
      for (const l of emitterLines) {
        this.write(l, this.left, w);
        this.y += this.textHeight(l, w) + 1;
      }
      this.y = Math.max(this.y, drawBox(top));
    }
    this.y += 6;
    if (this.opts.draft) {
      this.font(true, g.title).fillColor(RED);
      this.doc.text(DRAFT_LABEL, this.left, this.y, { width: this.inner, align: 'center' });
      this.doc.fillColor('black');
      this.y += this.textHeight(DRAFT_LABEL, this.inner, true, g.title) + 4;
    }
    this.rule();
  }

  private dates() {
    const m = this.m;
    this.field('Fecha de emisión', dia(m.fchEmis));
    this.field('Fecha de vencimiento', m.fchVenc && dia(m.fchVenc));
    const pago = m.fmaPago ? FORMA_PAGO_NAMES[m.fmaPago] : undefined;
    this.field('Forma de pago', pago ?? (m.fmaPagExp !== undefined ? `código ${m.fmaPagExp}` : undefined));
    for (const p of m.pagos) {
      this.field('Pago', `${dia(p.fecha)} $ ${formatAmount(p.monto)}${p.glosa ? ` (${p.glosa})` : ''}`);
    }
  }

  private receptor() {
    const r = this.m.receptor;
    // a boleta to an anonymous buyer (RUTRecep 66666666-6, the SII's "consumidor final") prints no receptor
    if ((this.m.tipo === 39 || this.m.tipo === 41) && r.rut === ANONYMOUS_BUYER_RUT && !r.razonSocial) return;
    this.section('Receptor');
    this.field('Señor(es)', r.razonSocial);
    this.field('R.U.T.', formatRut(r.rut));
    this.field('Giro', r.giro);
    this.field('Dirección', [r.direccion, r.comuna, r.ciudad].filter(Boolean).join(', '));
    this.field('Identificación extranjero', r.extranjero);
    this.field('Correo', r.correo);
  }

  private despacho() {
    const d = this.m.despacho;
    if (!d) return;
    this.section('Traslado');
    this.field(
      'Tipo de traslado',
      d.indTraslado ? (TRASLADO_NAMES[d.indTraslado] ?? d.indTraslado) : undefined,
    );
    this.field('Tipo de despacho', d.tipoDespacho);
    this.field('Destino', d.destino);
    this.field('R.U.T. transportista', d.rutTransportista ? formatRut(d.rutTransportista) : undefined);
    this.field('Chofer', d.chofer);
    this.field('Patente', d.patente);
  }

  private exportacion() {
    const x = this.m.exportacion;
    const moneda = this.m.totales.moneda;
    if (!x && !moneda) return;
    this.section('Exportación');
    this.field('Moneda', moneda);
    for (const l of x?.lines ?? []) this.field(l.split(': ')[0], l.split(': ').slice(1).join(': '));
  }

  private columns() {
    const w = this.inner;
    if (this.g.thermal) {
      // description over the whole width, then qty × price = amount on the next line
      return null;
    }
    const code = 55;
    const qty = 45;
    const unit = 35;
    const price = 70;
    const disc = 50;
    const amount = 75;
    const desc = w - code - qty - unit - price - disc - amount;
    let x = this.left;
    const at = (width: number) => {
      const c = { x, width };
      x += width;
      return c;
    };
    return {
      code: at(code),
      desc: at(desc),
      qty: at(qty),
      unit: at(unit),
      price: at(price),
      disc: at(disc),
      amount: at(amount),
    };
  }

  private itemText(it: PrintModel['items'][number]): string {
    return `${it.nombre}${it.exento && !['34', '110', '111', '112'].includes(String(this.m.tipo)) ? ' (exento)' : ''}${
      it.descripcion ? `\n${it.descripcion}` : ''
    }`;
  }

  private itemsHeader() {
    const c = this.columns();
    const size = this.g.small;
    const h = this.textHeight('X', 100, true, size) + 4;
    this.doc.rect(this.left, this.y, this.inner, h).fillColor('#e6e6e6').fill();
    this.doc.fillColor('black');
    if (!c) {
      this.write('Detalle', this.left + 2, this.inner - 4, { bold: true, size });
    } else {
      const cells: [string, { x: number; width: number }, 'left' | 'right'][] = [
        ['Código', c.code, 'left'],
        ['Descripción', c.desc, 'left'],
        ['Cantidad', c.qty, 'right'],
        ['Unidad', c.unit, 'left'],
        ['P. unitario', c.price, 'right'],
        ['Descuento', c.disc, 'right'],
        ['Valor', c.amount, 'right'],
      ];
      for (const [s, col, align] of cells) {
        this.font(true, size).fillColor('black');
        this.doc.text(s, col.x + 2, this.y + 2, { width: col.width - 4, align });
      }
    }
    this.y += h + 2;
  }

  private items() {
    this.section('Detalle');
    const headerH = this.textHeight('X', 100, true, this.g.small) + 6;
    this.ensure(headerH + 12);
    this.itemsHeader();
    const c = this.columns();
    for (const it of this.m.items) {
      if (!c) {
        const desc = `${it.linea}. ${this.itemText(it)}`;
        const line2 = `${formatAmount(it.cantidad ?? '1')} ${it.unidad ?? ''} x ${formatAmount(it.precio)}${
          it.descuento ? ` - ${formatAmount(it.descuento)}` : ''
        }`;
        const h1 = this.textHeight(desc, this.inner);
        const h2 = this.textHeight(line2, this.inner);
        this.ensure(h1 + h2 + 3);
        this.write(desc, this.left, this.inner);
        this.y += h1;
        this.write(line2, this.left, this.inner * 0.6);
        this.write(formatAmount(it.monto), this.left + this.inner * 0.6, this.inner * 0.4, {
          align: 'right',
        });
        this.y += h2 + 3;
        continue;
      }
      const desc = this.itemText(it);
      const h = Math.max(
        this.textHeight(desc, c.desc.width - 4),
        this.textHeight(it.codigo ?? '', c.code.width - 4),
      );
      if (this.y + h + 3 > this.bottomLimit) {
        this.ensure(h + 3 + headerH);
        this.itemsHeader();
      }
      const cells: [string, { x: number; width: number }, 'left' | 'right'][] = [
        [it.codigo ?? '', c.code, 'left'],
        [desc, c.desc, 'left'],
        [formatAmount(it.cantidad), c.qty, 'right'],
        [it.unidad ?? '', c.unit, 'left'],
        [formatAmount(it.precio), c.price, 'right'],
        [formatAmount(it.descuento), c.disc, 'right'],
        [formatAmount(it.monto), c.amount, 'right'],
      ];
      for (const [s, col, align] of cells) {
        if (!s) continue;
        this.write(s, col.x + 2, col.width - 4, { align });
      }
      this.y += h + 2;
      this.doc
        .moveTo(this.left, this.y)
        .lineTo(this.right, this.y)
        .lineWidth(0.25)
        .strokeColor('#bbb')
        .stroke();
      this.y += 2;
    }
  }

  private descuentos() {
    if (this.m.descuentos.length === 0) return;
    this.section('Descuentos y recargos globales');
    for (const d of this.m.descuentos) {
      const v = d.unidad === '%' ? `${formatAmount(d.valor)} %` : `$ ${formatAmount(d.valor)}`;
      this.field(d.tipo, `${v}${d.glosa ? ` (${d.glosa})` : ''}`);
    }
  }

  private referencias() {
    if (this.m.referencias.length === 0) return;
    this.section('Referencias');
    for (const r of this.m.referencias) {
      const tipo = REFERENCE_NAMES[r.tipoDoc] ?? `Tipo ${r.tipoDoc}`;
      const parts = [
        `${tipo} N° ${r.folio} del ${dia(r.fecha)}`,
        r.global ? 'referencia global' : '',
        r.codRef ? (COD_REF_NAMES[r.codRef] ?? `código ${r.codRef}`) : '',
        r.razon ?? '',
      ].filter(Boolean);
      const s = `• ${parts.join(' · ')}`;
      const h = this.textHeight(s, this.inner);
      this.ensure(h + 1);
      this.write(s, this.left, this.inner);
      this.y += h + 1;
    }
  }

  private totalsLines(): [string, string][] {
    const t = this.m.totales;
    const cur = t.moneda && !/^PESO CL$/i.test(t.moneda) ? t.moneda : '$';
    const money = (v: string | undefined) => (v === undefined ? undefined : `${cur} ${formatAmount(v)}`);
    const lines: [string, string | undefined][] = [
      ['Monto neto', money(t.neto)],
      ['Monto exento', money(t.exento)],
      [`I.V.A. ${t.tasaIva ? `${formatAmount(t.tasaIva)}%` : ''}`.trim(), money(t.iva)],
      ...t.impuestos.map((i): [string, string | undefined] => [
        `Impuesto ${i.tipo}${i.tasa ? ` ${formatAmount(i.tasa)}%` : ''}`,
        money(i.monto),
      ]),
      ['I.V.A. no retenido', money(t.ivaNoRet)],
      ['TOTAL', money(t.total)],
    ];
    const om = this.m.otraMoneda;
    if (om) {
      lines.push(
        [`Tipo de cambio (${om.moneda})`, formatAmount(om.tipoCambio)],
        ['Neto CLP', om.neto === undefined ? undefined : `$ ${formatAmount(om.neto)}`],
        ['Exento CLP', om.exento === undefined ? undefined : `$ ${formatAmount(om.exento)}`],
        ['I.V.A. CLP', om.iva === undefined ? undefined : `$ ${formatAmount(om.iva)}`],
        ['TOTAL CLP', `$ ${formatAmount(om.total)}`],
      );
    }
    return lines.filter((l): l is [string, string] => l[1] !== undefined);
  }

  private acuseLines(): string[] {
    return ['Nombre:', 'R.U.T.:', 'Fecha:', 'Recinto:', 'Firma:'];
  }

  /** Totals, the timbre and its legends, and on a CEDIBLE copy the acuse de recibo: kept together. */
  private bottom() {
    const g = this.g;
    const totals = this.totalsLines();
    const rowH = this.textHeight('X', 100, true) + 3;
    const totalsH = totals.length * rowH + 6;
    const timbreW = this.sym ? mmToPt(this.sym.widthMm) : mmToPt(60);
    const timbreH = this.sym ? mmToPt(this.sym.heightMm) : mmToPt(20);
    const legends = this.legends();
    const legendH = legends.reduce(
      (h, l) => h + this.textHeight(l, Math.max(timbreW, 150), false, g.small) + 1,
      0,
    );
    const timbreBlockH = timbreH + 8 + legendH;
    const cedible = this.copy === 'cedible';
    const acuseW = g.thermal ? this.inner : this.inner - timbreW - mmToPt(20) - 20;
    const acuseH = cedible
      ? this.acuseLines().length * (rowH + 4) +
        this.textHeight(ACUSE_LEGAL_TEXT, acuseW, false, g.small) +
        this.textHeight('CEDIBLE CON SU FACTURA', acuseW, true, g.title + 4) +
        20
      : 0;
    const needed = g.thermal
      ? totalsH + timbreBlockH + acuseH + 20
      : Math.max(totalsH + acuseH + 10, timbreBlockH) + 14;
    this.ensure(needed);
    this.y += 6;
    this.rule();
    const top = this.y;
    // totals: right column (letter), whole width (thermal)
    const tw = g.thermal ? this.inner : 230;
    const tx = this.right - tw;
    let ty = top;
    for (const [label, value] of totals) {
      const bold = label.startsWith('TOTAL');
      this.font(bold, g.base).fillColor('black');
      this.doc.text(label, tx, ty, { width: tw * 0.5 });
      this.doc.text(value, tx + tw * 0.5, ty, { width: tw * 0.5, align: 'right' });
      ty += rowH;
    }
    ty += 6;
    // the timbre: letter at the lower left, 2 cm from the paper's edge; thermal centred
    let sx = g.thermal ? (g.width - timbreW) / 2 : Math.max(this.left, mmToPt(20));
    let sy = g.thermal ? ty : top;
    if (g.thermal) sx = Math.max(sx, this.left);
    if (this.sym) {
      drawTimbre(this.doc, this.sym, sx, sy);
    } else {
      this.doc
        .lineWidth(0.5)
        .strokeColor('#999')
        .dash(3, { space: 3 })
        .rect(sx, sy, timbreW, timbreH)
        .stroke()
        .undash();
      this.font(true, g.small).fillColor('#999');
      this.doc.text('SIN TIMBRE (BORRADOR)', sx, sy + timbreH / 2 - 4, { width: timbreW, align: 'center' });
    }
    sy += timbreH + 6;
    const lw = g.thermal ? this.inner : Math.max(timbreW, 150);
    const lx = g.thermal ? this.left : sx;
    for (const l of legends) {
      this.font(false, g.small).fillColor('black');
      this.doc.text(l, lx, sy, { width: lw, align: 'center' });
      sy += this.textHeight(l, lw, false, g.small) + 1;
    }
    let end = Math.max(ty, sy);
    if (cedible) {
      let ay = g.thermal ? sy + 8 : ty;
      const ax = g.thermal ? this.left : this.right - acuseW;
      this.doc
        .lineWidth(0.75)
        .strokeColor('black')
        .rect(ax, ay, acuseW, acuseH - 8)
        .stroke();
      ay += 4;
      this.font(true, g.small).fillColor('black');
      this.doc.text('ACUSE DE RECIBO', ax + 4, ay, { width: acuseW - 8 });
      ay += rowH;
      for (const l of this.acuseLines()) {
        this.font(false, g.small);
        this.doc.text(l, ax + 4, ay, { width: 50 });
        this.doc
          .moveTo(ax + 50, ay + rowH - 3)
          .lineTo(ax + acuseW - 6, ay + rowH - 3)
          .lineWidth(0.4)
          .stroke();
        ay += rowH + 2;
      }
      this.font(false, g.small);
      this.doc.text(ACUSE_LEGAL_TEXT, ax + 4, ay, { width: acuseW - 8, align: 'justify' });
      ay += this.textHeight(ACUSE_LEGAL_TEXT, acuseW - 8, false, g.small) + 4;
      const label = CEDIBLE_LABEL[this.m.tipo];
      this.font(true, g.title + 4).fillColor(RED);
      this.doc.text(label, ax, ay, { width: acuseW - 4, align: 'right' });
      ay += this.textHeight(label, acuseW - 4, true, g.title + 4);
      this.doc.fillColor('black');
      end = Math.max(end, ay + 6);
    }
    this.y = end;
  }

  private legends(): string[] {
    const r = this.opts.resolucion;
    const res = r ? `Res. N° ${r.numero} de ${r.fecha.slice(0, 4)}` : 'Res. N° — de —';
    return [
      this.opts.draft ? 'Borrador: sin Timbre Electrónico SII' : 'Timbre Electrónico SII',
      res,
      'Verifique documento: www.sii.cl',
    ];
  }

  private pageNumbers() {
    const range = this.doc.bufferedPageRange();
    if (range.count < 2) return;
    for (let i = 0; i < range.count; i++) {
      this.doc.switchToPage(range.start + i);
      this.font(false, this.g.small).fillColor('black');
      this.doc.text(`Página ${i + 1} de ${range.count}`, this.left, this.height - this.g.margin - 8, {
        width: this.inner,
        align: 'right',
        lineBreak: false,
      });
    }
  }
}
