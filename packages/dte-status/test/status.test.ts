import { expect } from 'chai';
import {
  classify,
  eventsForTransition,
  isDeprecatedStatus,
  KNOWN_STATUSES,
  shouldApply,
  SII_STATUS_VOCABULARY,
  statusesReplacedBy,
  statusInWords,
} from '../src';

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s)).toISOString();

describe('dte-status classification', () => {
  it('words every status as a taxpayer reads it: the SII code beside its own codes only; queued is never accepted', () => {
    expect(statusInWords('EPR')).to.equal('Aceptado por el SII (EPR)');
    expect(statusInWords('RCH')).to.equal('Rechazado por el SII (RCH)');
    expect(statusInWords('-11')).to.equal('Procesando en el SII (-11)');
    expect(statusInWords('queued')).to.equal('En cola');
    expect(statusInWords('106')).to.equal('Código desconocido del SII (106)');
    expect(classify('queued').descripcion).to.not.match(/acept/i);
    for (const code of KNOWN_STATUSES)
      expect(statusInWords(code)).to.not.match(/\b(queued|signed|sending|stuck)\b/);
  });

  it('holds the whole documented vocabulary, deprecated members included', () => {
    for (const code of [
      'queued',
      'sending',
      'signed',
      'awaiting_sii',
      'SOK',
      'CRT',
      'FOK',
      'PDR',
      'PRD',
      '-11',
    ]) {
      expect(SII_STATUS_VOCABULARY).to.include(code);
      expect(classify(code)).to.include({ terminal: false, accion: 'esperar', categoria: 'en_proceso' });
    }
    for (const code of ['EPR', 'RPR', 'aceptado_con_reparos']) {
      expect(classify(code)).to.include({ terminal: true, categoria: 'aceptado', accion: 'ninguna' });
    }
    expect(classify('accepted')).to.include({ terminal: true, categoria: 'archivistico', accion: 'ninguna' });
    for (const code of ['RFR', 'RCT', 'RSC']) {
      expect(classify(code)).to.include({
        terminal: true,
        categoria: 'rechazado',
        accion: 'contactar_soporte',
      });
    }
    expect(classify('RCH')).to.include({ terminal: true, categoria: 'rechazado', accion: 'reemitir' });
    expect(classify('stuck')).to.include({
      terminal: false,
      categoria: 'requiere_accion',
      accion: 'reintentar_consulta',
      poll_activo: false,
    });
    expect(classify('sin_permiso_sii')).to.include({
      terminal: false,
      categoria: 'requiere_accion',
      accion: 'accion_en_sii',
    });
    expect(isDeprecatedStatus('awaiting_sii')).to.equal(true);
    expect(isDeprecatedStatus('aceptado_con_reparos')).to.equal(true);
    expect(isDeprecatedStatus('EPR')).to.equal(false);
  });

  it('classifies the requiere_accion outcomes outside the enum', () => {
    for (const code of ['emision_fallida', 'envio_repetido']) {
      expect(KNOWN_STATUSES).to.include(code);
      expect(SII_STATUS_VOCABULARY).not.to.include(code);
      expect(classify(code)).to.include({ terminal: false, categoria: 'requiere_accion' });
    }
  });

  it('never classifies an unknown authority code as success', () => {
    for (const code of ['106', '107', 'TEST', 'XYZ']) {
      const e = classify(code);
      expect(e).to.include({ code, terminal: false, categoria: 'en_proceso', accion: 'contactar_soporte' });
    }
  });

  it('gives every known code a Spanish label and description', () => {
    for (const code of KNOWN_STATUSES) {
      const e = classify(code);
      expect(e.label, code).to.match(/\S/);
      expect(e.descripcion, code).to.match(/\S/);
    }
  });
});

describe('dte-status shouldApply (no going backwards)', () => {
  it('applies the first observation and newer, later-stage ones', () => {
    expect(shouldApply(null, { sii_status: 'queued', observed_at: at(0) })).to.equal(true);
    expect(
      shouldApply(
        { sii_status: 'queued', observed_at: at(0) },
        { sii_status: 'sending', observed_at: at(1) },
      ),
    ).to.equal(true);
    expect(
      shouldApply({ sii_status: 'SOK', observed_at: at(2) }, { sii_status: 'FOK', observed_at: at(3) }),
    ).to.equal(true);
  });

  it('ignores a replay of the same observation', () => {
    const o = { sii_status: 'SOK', observed_at: at(2) };
    expect(shouldApply(o, { ...o })).to.equal(false);
  });

  it('never moves back to an earlier stage, even with a newer timestamp', () => {
    expect(
      shouldApply({ sii_status: 'SOK', observed_at: at(2) }, { sii_status: 'sending', observed_at: at(5) }),
    ).to.equal(false);
    expect(
      shouldApply({ sii_status: 'signed', observed_at: at(2) }, { sii_status: 'queued', observed_at: at(5) }),
    ).to.equal(false);
  });

  it('drops older observations delivered late', () => {
    expect(
      shouldApply({ sii_status: 'FOK', observed_at: at(5) }, { sii_status: 'SOK', observed_at: at(3) }),
    ).to.equal(false);
  });

  it('keeps a terminal verdict forever', () => {
    const epr = { sii_status: 'EPR', observed_at: at(5) };
    expect(shouldApply(epr, { sii_status: 'stuck', observed_at: at(9) })).to.equal(false);
    expect(shouldApply(epr, { sii_status: 'RCH', observed_at: at(9) })).to.equal(false);
  });

  it('lets a verdict replace any non-terminal status', () => {
    expect(
      shouldApply({ sii_status: 'stuck', observed_at: at(5) }, { sii_status: 'EPR', observed_at: at(6) }),
    ).to.equal(true);
  });

  it('lets refresh-status resume polling after stuck', () => {
    expect(
      shouldApply({ sii_status: 'stuck', observed_at: at(5) }, { sii_status: '-11', observed_at: at(6) }),
    ).to.equal(true);
  });
});

describe('dte-status statusesReplacedBy (what a worker may move in its own statement)', () => {
  it('is exactly the statuses shouldApply replaces by a not-older observation', () => {
    for (const next of ['signed', 'sending', 'EPR']) {
      const from = statusesReplacedBy(next);
      expect(from, next).to.have.length.greaterThan(0);
      for (const s of KNOWN_STATUSES) {
        const cur = { sii_status: s, observed_at: at(5) };
        const replaced =
          shouldApply(cur, { sii_status: next, observed_at: at(5) }) &&
          shouldApply(cur, { sii_status: next, observed_at: at(6) });
        // a listed status is always replaced; one not listed may still be (a later observation of
        // the same stage), but then the worker leaves it to the projector
        if (from.includes(s)) expect(replaced, `${s} -> ${next}`).to.equal(true);
      }
    }
    expect(statusesReplacedBy('signed')).to.include('queued');
    expect(statusesReplacedBy('signed')).to.not.include('signed');
    expect(statusesReplacedBy('EPR')).to.not.include('RCH');
  });
});

describe('dte-status eventsForTransition', () => {
  it('sends accepted and rejected together with their own status_changed', () => {
    expect(eventsForTransition('EPR')).to.deep.equal(['dte.status_changed', 'dte.accepted']);
    expect(eventsForTransition('RPR')).to.deep.equal(['dte.status_changed', 'dte.accepted']);
    expect(eventsForTransition('RCH')).to.deep.equal(['dte.status_changed', 'dte.rejected']);
    expect(eventsForTransition('RSC')).to.deep.equal(['dte.status_changed', 'dte.rejected']);
  });

  it('sends requiere_accion outcomes and intermediates only as status_changed', () => {
    for (const s of [
      'stuck',
      'sin_permiso_sii',
      'emision_fallida',
      'envio_repetido',
      'SOK',
      '-11',
      'sending',
    ]) {
      expect(eventsForTransition(s), s).to.deep.equal(['dte.status_changed']);
    }
  });

  it('sends nothing for internal pre-send statuses and for imported documents', () => {
    expect(eventsForTransition('queued')).to.deep.equal([]);
    expect(eventsForTransition('signed')).to.deep.equal([]);
    expect(eventsForTransition('accepted', { imported: true })).to.deep.equal([]);
  });

  it('adds dte.emitted once, when the document first has a track id', () => {
    expect(eventsForTransition('sending', { emittedNow: true })).to.deep.equal([
      'dte.emitted',
      'dte.status_changed',
    ]);
  });
});
