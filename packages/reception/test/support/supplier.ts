/**
 * A supplier that sends us intercambio files: its own certificate and CAF (test SII key), real
 * DTEs stamped and signed by the engine, and EnvioDTEs addressed to the receiving company.
 */
import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  santiagoDate,
  stampAndSignDte,
  type Caf,
  type DteDocument,
  type SigningCredential,
  type SiiKey,
} from '@dte/engine';

export interface Supplier {
  rut: string;
  signer: string;
  credential: SigningCredential;
  caf: Caf;
  siiKey: SiiKey;
  next: number;
}

let cached: SigningCredential | undefined;

export function makeSupplier(rut = '96543210-8', siiKey: SiiKey = createTestSiiKey(100)): Supplier {
  const signer = '13579246-8';
  cached ??= readP12(createTestP12({ rut: signer, name: 'Firmante Proveedor', password: 'x' }), 'x');
  const caf = parseCaf(
    createTestCaf({
      siiKey,
      rutEmisor: rut,
      razonSocial: 'PROVEEDOR SPA',
      tipoDte: 33,
      desde: 1,
      hasta: 200,
      fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)),
      keyBits: 512,
    }),
  );
  return { rut, signer, credential: cached, caf, siiKey, next: 1 };
}

export function invoice(s: Supplier, receptor: string, neto = 50_000): DteDocument {
  const folio = s.next++;
  const iva = Math.round(neto * 0.19);
  return {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: folio, FchEmis: santiagoDate(new Date()) },
      Emisor: {
        RUTEmisor: s.rut,
        RznSoc: 'PROVEEDOR SPA',
        GiroEmis: 'Venta de insumos',
        Acteco: [467300],
        DirOrigen: 'Av. Uno 100',
        CmnaOrigen: 'Santiago',
      },
      Receptor: {
        RUTRecep: receptor,
        RznSocRecep: 'CLIENTE SPA',
        GiroRecep: 'Comercio',
        DirRecep: 'Calle Dos 2',
        CmnaRecep: 'Providencia',
      },
      Totales: { MntNeto: neto, TasaIVA: 19, IVA: iva, MntTotal: neto + iva },
    },
    Detalle: [{ NroLinDet: 1, NmbItem: 'Insumo', QtyItem: 1, PrcItem: neto, MontoItem: neto }],
  };
}

export function signed(s: Supplier, doc: DteDocument): string {
  return stampAndSignDte(doc, { caf: s.caf, credential: s.credential, timestamp: new Date() });
}

/** An intercambio EnvioDTE from the supplier to `receptor` (Carátula RutReceptor = receptor). */
export function intercambio(s: Supplier, dtes: string[], receptor: string): Buffer {
  return buildEnvioDte(dtes, {
    rutEmisor: s.rut,
    rutEnvia: s.signer,
    rutReceptor: receptor,
    fchResol: '2024-01-01',
    nroResol: 0,
    credential: s.credential,
    timestamp: new Date(),
  });
}

/** A lone DTE file, as a supplier may send it outside an envelope. */
export function loneDte(dteText: string): Buffer {
  return Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${dteText}`, 'latin1');
}

/** The SII keys map reception verifies a CAF's FRMA with (the supplier's SII key by its IDK). */
export function siiKeysOf(s: Supplier): Record<string, string> {
  return { [String(s.siiKey.idk)]: s.siiKey.publicKeyPem };
}

/**
 * An EnvioDTE just under `maxBytes` (10 MiB by default, the reception limit): invoices of 60
 * lines with long descriptions, all verifiable (about 2 s of CPU to verify on this machine).
 */
export function bigIntercambio(s: Supplier, receptor: string, maxBytes = 10 * 1024 * 1024): Buffer {
  const one = (): string => {
    const d = invoice(s, receptor, 1000);
    d.Detalle = Array.from({ length: 60 }, (_, k) => ({
      NroLinDet: k + 1,
      NmbItem: `Insumo ${k} `.padEnd(80, 'x'),
      DscItem: 'y'.repeat(1000),
      QtyItem: 1,
      PrcItem: 1000,
      MontoItem: 1000,
    }));
    const neto = 60_000;
    const iva = Math.round(neto * 0.19);
    d.Encabezado.Totales = { MntNeto: neto, TasaIVA: 19, IVA: iva, MntTotal: neto + iva };
    return signed(s, d);
  };
  const first = one();
  const count = Math.floor((maxBytes - 8_192) / (Buffer.byteLength(first, 'latin1') + 64));
  const dtes = [first, ...Array.from({ length: count - 1 }, one)];
  const file = intercambio(s, dtes, receptor);
  if (file.length > maxBytes) throw new Error(`the big file has ${file.length} bytes, over ${maxBytes}`);
  return file;
}
