import bwipjs from 'bwip-js';
import { ServiceError } from '@dte/error-catalog';

/**
 * The SII's rules for the timbre's PDF417 (format of the printed samples, as the public
 * implementations quote them): error correction level 5; the symbol prints within 2 × 5 cm at
 * least and 4 × 9 cm at most (height × width); the narrowest module (X) at least 0.0067 inch
 * (0.17 mm); rows three modules high (Y = 3X, bwip-js's default row multiplier). The data is the
 * TED element as signed, as ISO-8859-1 bytes (binary compaction).
 */
export const TIMBRE_RULES = {
  errorCorrectionLevel: 5,
  minWidthMm: 50,
  minHeightMm: 20,
  maxWidthMm: 90,
  maxHeightMm: 40,
  minModuleMm: 0.17,
  rowHeightModules: 3,
} as const;

export interface TimbreSymbol {
  /** data columns of the symbol */
  columns: number;
  rows: number;
  /** width of the symbol in modules (start, indicators, data, stop) */
  widthModules: number;
  /** one 0/1 per module, row after row (each row once; it prints rowHeightModules high) */
  modules: ArrayLike<number>;
  /** X, the module width, in millimetres */
  moduleMm: number;
  widthMm: number;
  heightMm: number;
}

const MM = 72 / 25.4;
export const mmToPt = (mm: number) => mm * MM;

interface RawSymbol {
  pixs: ArrayLike<number>;
  pixx: number;
  pixy: number;
}

function encode(ted: string, columns: number): RawSymbol {
  const raw = bwipjs.raw({
    bcid: 'pdf417',
    text: ted,
    eclevel: TIMBRE_RULES.errorCorrectionLevel,
    columns,
    binarytext: true,
  } as Parameters<typeof bwipjs.raw>[0]) as unknown as RawSymbol[];
  return raw[0];
}

/**
 * Encodes the TED and chooses the number of columns that gives the widest module inside the box
 * (`maxWidthMm` × `maxHeightMm`, no larger than the SII's maximum).
 */
export function timbreSymbol(
  ted: string,
  box: { maxWidthMm: number; maxHeightMm: number } = {
    maxWidthMm: TIMBRE_RULES.maxWidthMm,
    maxHeightMm: TIMBRE_RULES.maxHeightMm,
  },
): TimbreSymbol {
  for (let i = 0; i < ted.length; i++) {
    if (ted.charCodeAt(i) > 0xff) {
      throw new ServiceError(
        'dte.print.measurement_failed',
        'The TED holds a character outside ISO-8859-1; it cannot be printed as signed.',
      );
    }
  }
  const maxW = Math.min(box.maxWidthMm, TIMBRE_RULES.maxWidthMm);
  const maxH = Math.min(box.maxHeightMm, TIMBRE_RULES.maxHeightMm);
  // one probe gives the codeword count (rows × columns, padded); then pick the best shape
  const probeCols = 10;
  const probe = encode(ted, probeCols);
  const codewords = (probe.pixs.length / probe.pixx) * probeCols;
  let best = { columns: probeCols, x: 0 };
  for (let c = 3; c <= 30; c++) {
    const rows = Math.ceil(codewords / c);
    if (rows < 3 || rows > 90) continue;
    const x = Math.min(maxW / (69 + 17 * c), maxH / (TIMBRE_RULES.rowHeightModules * rows));
    if (x > best.x) best = { columns: c, x };
  }
  const sym = best.columns === probeCols ? probe : encode(ted, best.columns);
  const rows = sym.pixs.length / sym.pixx;
  const moduleMm = Math.min(maxW / sym.pixx, maxH / (TIMBRE_RULES.rowHeightModules * rows));
  if (moduleMm < TIMBRE_RULES.minModuleMm) {
    throw new ServiceError(
      'dte.print.overflow',
      `The timbre needs modules of ${moduleMm.toFixed(3)} mm to fit; the SII's minimum is ${TIMBRE_RULES.minModuleMm} mm.`,
    );
  }
  return {
    columns: best.columns,
    rows,
    widthModules: sym.pixx,
    modules: sym.pixs,
    moduleMm,
    widthMm: moduleMm * sym.pixx,
    heightMm: moduleMm * TIMBRE_RULES.rowHeightModules * rows,
  };
}

/** Draws the symbol as vector rectangles (runs of dark modules per row) at (x, y) points. */
export function drawTimbre(doc: PDFKit.PDFDocument, sym: TimbreSymbol, x: number, y: number): void {
  const X = mmToPt(sym.moduleMm);
  const Y = X * TIMBRE_RULES.rowHeightModules;
  doc.save();
  for (let r = 0; r < sym.rows; r++) {
    let c = 0;
    while (c < sym.widthModules) {
      if (sym.modules[r * sym.widthModules + c]) {
        const start = c;
        while (c < sym.widthModules && sym.modules[r * sym.widthModules + c]) c++;
        doc.rect(x + start * X, y + r * Y, (c - start) * X, Y);
      } else {
        c++;
      }
    }
  }
  doc.fillColor('black').fill();
  doc.restore();
}
