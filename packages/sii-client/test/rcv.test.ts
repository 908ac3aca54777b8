import { expect } from 'chai';
import { interpretRcvReply, isSiiError, SiiClient } from '../src';

const reply = (status: number, body: unknown) => ({
  status,
  headers: {},
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

function kindOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (isSiiError(err)) return err.kind;
    throw err;
  }
  return 'none';
}

describe('sii-client: RCV read answers', () => {
  it('reads documents with their events and cesión (null = none known, absent = not said)', () => {
    const r = interpretRcvReply(
      reply(200, {
        rutEmpresa: '76086428-5',
        periodo: '2026-11',
        documentos: [
          {
            tipoDte: 33,
            folio: 7,
            rutEmisor: '96543210-8',
            rutReceptor: '76086428-5',
            fchEmis: '2026-11-20',
            fechaRecepcion: '2026-11-20T12:00:00.000Z',
            mntNeto: 100,
            mntExe: 0,
            iva: 19,
            mntTotal: 119,
            estado: 'RECLAMADO',
            eventos: ['RCD'],
            cesion: null,
          },
          {
            tipoDte: 33,
            folio: 8,
            rutEmisor: '96543210-8',
            fchEmis: '2026-11-21',
            mntTotal: 1,
            estado: 'REGISTRO',
          },
        ],
      }),
      'compras',
    );
    expect(r.documentos[0]).to.include({ folio: 7, estado: 'RECLAMADO', cesion: null });
    expect(r.documentos[0]!.eventos).to.deep.equal(['RCD']);
    expect(r.documentos[1]!.eventos).to.deep.equal([]);
    expect('cesion' in r.documentos[1]!).to.equal(false);
  });

  it('classifies failures: 401 auth, 403 rejected, 5xx transient, garbage protocol', () => {
    expect(kindOf(() => interpretRcvReply(reply(401, { error: 'token_invalido' }), 'ventas'))).to.equal(
      'auth',
    );
    expect(kindOf(() => interpretRcvReply(reply(403, { error: 'sin_permiso' }), 'ventas'))).to.equal(
      'rejected',
    );
    expect(kindOf(() => interpretRcvReply(reply(503, 'Error 500'), 'ventas'))).to.equal('transient');
    expect(kindOf(() => interpretRcvReply(reply(200, '<html>'), 'ventas'))).to.equal('protocol');
    expect(kindOf(() => interpretRcvReply(reply(200, { documentos: [{ folio: 1 }] }), 'ventas'))).to.equal(
      'protocol',
    );
  });

  it('refuses to call the real SII (its RCV calls are undocumented): nothing is sent', async () => {
    const c = new SiiClient({});
    let err: unknown;
    try {
      await c.readRcv({
        env: 'cert',
        token: 'T',
        rutEmpresa: '76086428-5',
        operacion: 'ventas',
        periodo: '2026-11',
      });
    } catch (e) {
      err = e;
    }
    expect(isSiiError(err) && err.kind).to.equal('protocol');
  });
});
