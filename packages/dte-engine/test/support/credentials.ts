import {
  Caf,
  SigningCredential,
  TipoDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
} from '../../src';
import { SiiKey } from '../../src/fixtures';
import { EMISOR_RUT } from './documents';

/** One SII key, one .p12 and one CAF per type for the whole run (512-bit CAF keys for speed). */
export const SENDER_RUT = '12345678-5';
export const P12_PASSWORD = 'clave-de-prueba';

let cached:
  | { sii: SiiKey; p12: Buffer; credential: SigningCredential; cafs: Map<number, { xml: string; caf: Caf }> }
  | undefined;

export function testCredentials(): NonNullable<typeof cached> {
  if (!cached) {
    const sii = createTestSiiKey(100);
    const p12 = createTestP12({ rut: SENDER_RUT, name: 'María José Pérez', password: P12_PASSWORD });
    cached = { sii, p12, credential: readP12(p12, P12_PASSWORD), cafs: new Map() };
  }
  return cached;
}

export function cafFor(tipo: TipoDte): { xml: string; caf: Caf } {
  const creds = testCredentials();
  let entry = creds.cafs.get(tipo);
  if (!entry) {
    const xml = createTestCaf({
      siiKey: creds.sii,
      rutEmisor: EMISOR_RUT,
      razonSocial: 'COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA',
      tipoDte: tipo,
      desde: 1,
      hasta: 500,
      fechaAutorizacion: today(),
      keyBits: 512,
    });
    entry = { xml, caf: parseCaf(xml) };
    creds.cafs.set(tipo, entry);
  }
  return entry;
}

/** Today's date in Santiago, YYYY-MM-DD. */
export function today(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(new Date());
}
