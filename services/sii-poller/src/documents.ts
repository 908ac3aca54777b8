/**
 * How the poller names a document to QueryEstDte (issuer, receiver, type, folio, date, total),
 * as its XML does, so exports and documents whose stored columns differ are found.
 */
import type { DocumentStatusQuery } from '@dte/sii-client';
import type { EntityManager, DataSource } from 'typeorm';

export interface DocRow {
  id: string;
  organization_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: string;
  rut_receptor: string | null;
  fecha_emision: string;
  monto_total: string;
  /** X-Request-Id of the POST that issued it (log correlation), when known */
  request_id?: string | null;
  document?: {
    Encabezado?: {
      IdDoc?: { FchEmis?: string };
      Receptor?: { RUTRecep?: string };
      Totales?: { MntTotal?: number };
    };
  };
}

export type DocQuery = Omit<DocumentStatusQuery, 'token' | 'rutConsultante'>;

export async function loadDocs(db: DataSource | EntityManager, ids: string[]): Promise<DocRow[]> {
  return db.query(
    `SELECT id, organization_id, sii_env, tipo_dte, folio, rut_receptor,
            to_char(fecha_emision, 'YYYY-MM-DD') AS fecha_emision, monto_total, document, request_id
       FROM dtes WHERE id = ANY($1::uuid[]) ORDER BY id`,
    [ids],
  );
}

/** The QueryEstDte parameters of a document, or undefined when it cannot be named (no guess). */
export function documentQuery(d: DocRow, env: 'cert' | 'prod', rutCompany: string): DocQuery | undefined {
  const enc = d.document?.Encabezado;
  const query: DocQuery = {
    env,
    rutCompany,
    rutReceptor: enc?.Receptor?.RUTRecep ?? d.rut_receptor ?? '',
    tipoDte: d.tipo_dte,
    folio: Number(d.folio),
    fechaEmision: enc?.IdDoc?.FchEmis ?? d.fecha_emision,
    montoTotal: Number(enc?.Totales?.MntTotal ?? d.monto_total),
  };
  // e.g. a total in foreign currency with decimals cannot be asked about
  if (!query.rutReceptor || !Number.isSafeInteger(query.montoTotal)) return undefined;
  return query;
}
