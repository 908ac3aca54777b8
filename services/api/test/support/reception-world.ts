/**
 * The purchases side's world, shared by the reception tests over HTTP and over MCP: the api with
 * the SII simulator (its register answers at once), one receiving company with its API key and
 * certificate, enrolled at the SII; a supplier whose CAF the simulator's SII signed (reception
 * verifies each CAF's FRMA); the RCV as the SII answers it to the company's certificate (what
 * services/rcv-sync reads); and purchases put in the SII's register as a supplier's upload would.
 */
import { readP12, santiagoDate } from '@dte/engine';
import type { RcvSource } from '@dte/reception';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { makeSupplier, type Supplier } from '../../../../packages/reception/test/support/supplier';
import { enrolAtSii, newRut, simAdmin, startTestApi, testP12, uploadCert, type TestApi } from './test-api';

/** The supplier of the reception tests (its intercambio files and its purchases in the register). */
export const SUPPLIER_RUT = '96543210-8';

export interface ReceivingCompany {
  key: string;
  rut: string;
  orgId: string;
  companyId: string;
  certId: string;
}

/** A fresh organization and company with an API key and a certificate of its own RUT, enrolled at the SII. */
export async function receivingCompany(t: TestApi): Promise<ReceivingCompany> {
  const rut = newRut();
  const s = await t.seed({ rut });
  const cert = await uploadCert(t, s.api_key, rut);
  await enrolAtSii(t, rut);
  return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id, certId: cert.id };
}

/** A purchase as the SII's register holds it; IVA and total follow from mntNeto (19 %). */
export interface SiiPurchase {
  rutReceptor: string;
  folio: number;
  mntNeto: number;
  /** default SUPPLIER_RUT */
  rutEmisor?: string;
  razonSocialEmisor?: string;
  /** default 33 */
  tipoDte?: number;
  /** default today (Chile) */
  fchEmis?: string;
  /** when the SII received it (ISO), default now */
  fechaRecepcion?: string;
}

/** Puts a purchase in the SII simulator's register (certification), as the supplier's upload would. */
export async function registerPurchase(t: Pick<TestApi, 'sim'>, p: SiiPurchase): Promise<void> {
  const iva = Math.round(p.mntNeto * 0.19);
  await simAdmin(t, 'POST', '/admin/cert/purchases', {
    rutEmisor: SUPPLIER_RUT,
    tipoDte: 33,
    fchEmis: santiagoDate(new Date()),
    ...p,
    mntExe: 0,
    iva,
    mntTotal: p.mntNeto + iva,
  });
}

/** The RCV as the SII (simulator) answers it to the certificate of `rut` (uploadCert's .p12). */
export function simulatorRcv(t: Pick<TestApi, 'sim'>, rut: string): RcvSource {
  const sii = new SiiClient({ endpoints: simulatorEndpoints(t.sim.url), timeoutMs: 5000 });
  const credential = readP12(testP12(rut), 'secreto');
  return {
    read: (q) =>
      sii
        .session(credential)
        .readRcv({ env: q.env, rutEmpresa: q.rut, operacion: q.operacion, periodo: q.periodo }),
  };
}

export interface ReceptionWorld extends ReceivingCompany {
  t: TestApi;
  supplier: Supplier;
  rcv: RcvSource;
  /** a purchase addressed to the company in the SII's register */
  purchase(p: Omit<SiiPurchase, 'rutReceptor'>): Promise<void>;
  close(): Promise<void>;
}

export async function startReceptionWorld(
  opts: Omit<NonNullable<Parameters<typeof startTestApi>[0]>, 'sim'> = {},
): Promise<ReceptionWorld> {
  const t = await startTestApi({ ...opts, sim: { timings: { registerMs: 0, stepMs: 0 } } });
  try {
    const company = await receivingCompany(t);
    let supplier: Supplier | undefined;
    return {
      t,
      ...company,
      // made when first asked for (its signer's .p12 takes a while): the MCP test sends no file
      get supplier() {
        return (supplier ??= makeSupplier(SUPPLIER_RUT, t.sim.siiKeys.cert));
      },
      rcv: simulatorRcv(t, company.rut),
      purchase: (p) => registerPurchase(t, { rutReceptor: company.rut, ...p }),
      close: () => t.close(),
    };
  } catch (err) {
    await t.close();
    throw err;
  }
}
