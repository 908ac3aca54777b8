/**
 * What a QueryEstUp answer means for the documents of the upload (the poller's one table of
 * SII answers; what each status means for a client is @dte/status's).
 */
import type { DocumentStatus, UploadStatus } from '@dte/sii-client';

/**
 * Envelope rejections: the whole send, hence every document of it; final. RCO, RPT and VOF are
 * the boleta REST status's other rejections of a send (@dte/status classifies them final).
 */
export const ENVELOPE_REJECTIONS: readonly string[] = ['RFR', 'RCT', 'RSC', 'RCO', 'RPT', 'VOF'];

export type UploadReading =
  /** publish `estado` for every document when it changed; poll again */
  | { kind: 'progress'; estado: string; glosa?: string }
  /** the SII failed to answer; poll again, publish nothing */
  | { kind: 'retry'; reason: string }
  /** the certificate's user may not query this company: sin_permiso_sii */
  | { kind: 'no_permission'; glosa?: string }
  /** the same verdict for every document */
  | { kind: 'verdict_all'; estado: string; glosa?: string }
  /** EPR: per document, from the counts or QueryEstDte */
  | { kind: 'processed'; status: UploadStatus };

export function readUploadStatus(st: UploadStatus): UploadReading {
  if (st.problem === 'no_permission') return { kind: 'no_permission', glosa: st.glosa ?? st.estado };
  if (st.problem === 'sii_error')
    return { kind: 'retry', reason: `QueryEstUp ${st.estado} ${st.glosa ?? ''}`.trim() };
  if (ENVELOPE_REJECTIONS.includes(st.estado))
    return { kind: 'verdict_all', estado: st.estado, glosa: st.glosa };
  if (st.estado === 'EPR') return { kind: 'processed', status: st };
  // -11 and the intermediate codes (REC, SOK, CRT, FOK, PDR, PRD), and unknown codes as they are
  return { kind: 'progress', estado: st.estado, glosa: st.glosa };
}

/**
 * EPR counts → one status for every document when the counts leave no doubt, else undefined
 * (ask QueryEstDte per document). The SII counts a reparo among the accepted too.
 */
export function uniformVerdict(st: UploadStatus): 'EPR' | 'RCH' | 'RPR' | undefined {
  const t = st.totals;
  if (t.rechazados === 0 && t.reparos === 0) return 'EPR';
  if (t.informados > 0 && t.rechazados >= t.informados) return 'RCH';
  if (t.rechazados === 0 && t.informados > 0 && t.reparos >= t.informados) return 'RPR';
  return undefined;
}

/** QueryEstDte of one document of a processed (EPR) upload → its status. */
export function documentVerdict(d: DocumentStatus): { estado: string; glosa?: string } {
  const glosa = d.glosaEstado ?? d.glosaErr;
  const text = `${d.glosaEstado ?? ''} ${d.glosaErr ?? ''}`;
  if (d.estado === 'DOK') return { estado: /\bRPR\b|reparo/i.test(text) ? 'RPR' : 'EPR', glosa };
  if (/\bRCH\b|rechazado/i.test(text)) return { estado: 'RCH', glosa };
  // anything else (DNK, FAU without a rejection, an error code) is published as the SII said it
  return { estado: d.estado, glosa };
}

/** What QueryEstDte says of a document we have no track id for (reconciliation). */
export type DocCheckReading =
  /** the SII processed it: its verdict (final) */
  | { kind: 'verdict'; estado: 'EPR' | 'RPR' | 'RCH'; glosa?: string }
  /** not (yet) at the SII, or its send still in process: ask again (spends the budget) */
  | { kind: 'not_found'; estado: string; glosa?: string }
  /** the SII holds other data under this folio (DNK): only an operator can tell */
  | { kind: 'mismatch'; estado: string; glosa?: string }
  /** the company may not issue electronic documents at the SII (EMP) */
  | { kind: 'no_permission'; glosa?: string }
  /** an error or another code: ask again (spends the budget) */
  | { kind: 'retry'; estado: string; glosa?: string };

/**
 * QueryEstDte of a document under reconciliation → what to do. DOK → EPR or RPR; a rejection
 * (FAU "RCH - DTE Rechazado") → RCH; FAU otherwise → not found yet. Never a success guessed from
 * anything but DOK.
 */
export function readDocCheck(d: DocumentStatus): DocCheckReading {
  const v = documentVerdict(d);
  const glosa = v.glosa;
  if (v.estado === 'EPR' || v.estado === 'RPR' || v.estado === 'RCH')
    return { kind: 'verdict', estado: v.estado, ...(glosa ? { glosa } : {}) };
  if (d.estado === 'FAU') return { kind: 'not_found', estado: d.estado, ...(glosa ? { glosa } : {}) };
  if (d.estado === 'DNK') return { kind: 'mismatch', estado: d.estado, ...(glosa ? { glosa } : {}) };
  if (d.estado === 'EMP') return { kind: 'no_permission', ...(glosa ? { glosa } : {}) };
  return { kind: 'retry', estado: d.estado, ...(glosa ? { glosa } : {}) };
}
