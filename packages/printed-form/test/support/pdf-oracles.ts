/**
 * How a person sees a PDF, for the tests: poppler renders it (pdftoppm at 300 dpi, pdftotext,
 * pdfinfo) and zxing-cpp (python3-zxing-cpp) reads the PDF417 off the rendered page like a scanner.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const DECODE = `
import base64, sys, zxingcpp
from PIL import Image
for f in sys.argv[1:]:
    for r in zxingcpp.read_barcodes(Image.open(f), formats=zxingcpp.BarcodeFormat.PDF417):
        print(base64.b64encode(r.bytes).decode())
`;

function withPdf<T>(pdf: Buffer, fn: (file: string, dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-oracle-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    fs.writeFileSync(file, pdf);
    return fn(file, dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every PDF417 zxing finds on the pages (default: all) rendered at 300 dpi, as raw bytes. */
export function decodePdf417(pdf: Buffer, pages?: { first: number; last: number }): Buffer[] {
  return withPdf(pdf, (file, dir) => {
    const range = pages ? ['-f', String(pages.first), '-l', String(pages.last)] : [];
    execFileSync('pdftoppm', ['-r', '300', '-png', ...range, file, path.join(dir, 'page')]);
    const pngs = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.png'))
      .sort()
      .map((f) => path.join(dir, f));
    const out = execFileSync(PYTHON, ['-c', DECODE, ...pngs], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => Buffer.from(l, 'base64'));
  });
}

/** The text of the PDF as pdftotext reads it (layout kept). */
export function pdfText(pdf: Buffer): string {
  return withPdf(pdf, (file) => execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }));
}

/** Page count and the first page's size in points, from pdfinfo. */
export function pdfInfo(pdf: Buffer): { pages: number; width: number; height: number } {
  const info = withPdf(pdf, (file) => execFileSync('pdfinfo', [file], { encoding: 'utf8' }));
  const pages = Number(/Pages:\s+(\d+)/.exec(info)?.[1]);
  const size = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(info);
  return { pages, width: Number(size?.[1]), height: Number(size?.[2]) };
}
