import { expect } from 'chai';
import type { DocumentStatus, UploadStatus } from '@dte/sii-client';
import { classify } from '@dte/status';
import {
  backoffDelay,
  documentVerdict,
  readDocCheck,
  readUploadStatus,
  uniformVerdict,
  type PollerSettings,
} from '../src';

function up(
  estado: string,
  totals = { informados: 0, aceptados: 0, rechazados: 0, reparos: 0 },
  problem?: UploadStatus['problem'],
): UploadStatus {
  return { estado, counts: [], totals, raw: '', ...(problem ? { problem } : {}) };
}
const doc = (estado: string, glosaEstado?: string): DocumentStatus => ({
  estado,
  fields: {},
  raw: '',
  ...(glosaEstado ? { glosaEstado } : {}),
});

describe('sii-poller: reading the SII answers', () => {
  it('publishes -11 and the intermediate codes as progress, unknown codes as they are (classified unknown, never success)', () => {
    for (const code of ['REC', 'SOK', 'CRT', 'FOK', 'PDR', 'PRD'])
      expect(readUploadStatus(up(code))).to.deep.include({ kind: 'progress', estado: code });
    expect(readUploadStatus(up('-11', undefined, 'pending'))).to.deep.include({
      kind: 'progress',
      estado: '-11',
    });
    const odd = readUploadStatus(up('107'));
    expect(odd).to.deep.include({ kind: 'progress', estado: '107' });
    expect(classify('107')).to.include({ terminal: false, accion: 'contactar_soporte' });
  });

  it('reads envelope rejections as the verdict of every document, permission and SII errors apart', () => {
    for (const code of ['RFR', 'RCT', 'RSC']) {
      expect(readUploadStatus(up(code))).to.deep.include({ kind: 'verdict_all', estado: code });
      expect(classify(code).categoria).to.equal('rechazado');
    }
    expect(readUploadStatus(up('-6', undefined, 'no_permission')).kind).to.equal('no_permission');
    expect(readUploadStatus(up('-4', undefined, 'sii_error')).kind).to.equal('retry');
    expect(readUploadStatus(up('EPR')).kind).to.equal('processed');
  });

  it('takes EPR counts as one verdict only when they leave no doubt', () => {
    const t = (informados: number, aceptados: number, rechazados: number, reparos: number) =>
      uniformVerdict(up('EPR', { informados, aceptados, rechazados, reparos }));
    expect(t(3, 3, 0, 0)).to.equal('EPR');
    expect(t(2, 0, 2, 0)).to.equal('RCH');
    expect(t(2, 2, 0, 2)).to.equal('RPR'); // the SII counts a reparo among the accepted
    expect(t(3, 2, 1, 0)).to.equal(undefined);
    expect(t(3, 3, 0, 1)).to.equal(undefined);
  });

  it('reads QueryEstDte per document: DOK is EPR or RPR, a rejected document RCH, anything else as said', () => {
    expect(documentVerdict(doc('DOK', 'DTE Recibido')).estado).to.equal('EPR');
    expect(documentVerdict(doc('DOK', 'RPR - Aceptado con Reparos')).estado).to.equal('RPR');
    expect(documentVerdict(doc('FAU', 'RCH - DTE Rechazado')).estado).to.equal('RCH');
    expect(documentVerdict(doc('DNK', 'DTE Recibido - Datos no coinciden')).estado).to.equal('DNK');
  });

  it('reconciles a document without a track id only from the SII own verdict: DOK or a rejection end it, FAU asks again, DNK and EMP stop', () => {
    expect(readDocCheck(doc('DOK', 'DTE Recibido'))).to.deep.include({ kind: 'verdict', estado: 'EPR' });
    expect(readDocCheck(doc('DOK', 'RPR - Aceptado con Reparos'))).to.deep.include({
      kind: 'verdict',
      estado: 'RPR',
    });
    expect(readDocCheck(doc('FAU', 'RCH - DTE Rechazado'))).to.deep.include({
      kind: 'verdict',
      estado: 'RCH',
    });
    // not received, or its send still in process: never a verdict, never a reason to re-upload
    expect(readDocCheck(doc('FAU', 'DTE No Recibido'))).to.deep.include({ kind: 'not_found', estado: 'FAU' });
    expect(readDocCheck(doc('DNK', 'DTE Recibido'))).to.deep.include({ kind: 'mismatch', estado: 'DNK' });
    expect(readDocCheck(doc('EMP')).kind).to.equal('no_permission');
    for (const odd of ['-1', 'FNA', 'TMD', '107']) expect(readDocCheck(doc(odd)).kind).to.equal('retry');
  });

  it('backs off geometrically up to the ceiling', () => {
    const s = { backoffBaseMs: 100, backoffFactor: 2, backoffMaxMs: 500 } as PollerSettings;
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(s, n))).to.deep.equal([100, 200, 400, 500, 500]);
  });
});
