import { expect } from 'chai';
import {
  lastPeriodos,
  loadBillingSettings,
  mesEnPalabras,
  noticeMail,
  parseMonthlyLimit,
  periodoOf,
} from '../src';

describe('@dte/billing: month, settings and notice text', () => {
  it('a document counts in its month of America/Santiago, not UTC', () => {
    // 2026-12-01 02:00 UTC is still 30 November in Chile (UTC-3 in summer)
    expect(periodoOf(new Date('2026-12-01T02:00:00Z'))).to.equal('2026-11');
    expect(periodoOf(new Date('2026-12-01T03:30:00Z'))).to.equal('2026-12');
    // winter (UTC-4): 1 July 03:59 UTC is 30 June in Chile
    expect(periodoOf(new Date('2026-07-01T03:59:00Z'))).to.equal('2026-06');
  });

  it('the last months cross the year', () => {
    expect(lastPeriodos('2026-02', 4)).to.deep.equal(['2025-11', '2025-12', '2026-01', '2026-02']);
  });

  it('limits: whole numbers or unlimited; anything else is refused', () => {
    expect(parseMonthlyLimit('0', 'x')).to.equal(0);
    expect(parseMonthlyLimit('250', 'x')).to.equal(250);
    expect(parseMonthlyLimit('unlimited', 'x')).to.equal(null);
    for (const bad of ['-1', 'diez', '1.5', '', ' ', '1e3', '99999999999']) {
      expect(() => parseMonthlyLimit(bad, '--monthly-limit'), bad).to.throw(/--monthly-limit/);
    }
  });

  it('settings from the environment: free always a plan; defaults 100 in production, unlimited in certification', () => {
    expect(loadBillingSettings({})).to.deep.equal({
      plans: ['free', 'pro', 'empresa'],
      defaultLimits: { prod: 100, cert: null },
    });
    expect(
      loadBillingSettings({
        BILLING_PLANS: 'basico, plus',
        BILLING_FREE_PROD_LIMIT: '20',
        BILLING_CERT_LIMIT: '500',
      }),
    ).to.deep.equal({ plans: ['free', 'basico', 'plus'], defaultLimits: { prod: 20, cert: 500 } });
    expect(() => loadBillingSettings({ BILLING_FREE_PROD_LIMIT: '-5' })).to.throw(/BILLING_FREE_PROD_LIMIT/);
    expect(() => loadBillingSettings({ BILLING_PLANS: 'Pro Max' })).to.throw(/BILLING_PLANS/);
  });

  it('the notices speak Spanish (Chile) with es-CL numbers', () => {
    expect(mesEnPalabras('2026-11')).to.equal('noviembre de 2026');
    const m = noticeMail(
      {
        organization_id: 'x',
        sii_env: 'prod',
        periodo: '2026-11',
        threshold: 80,
        used: 1600,
        monthly_limit: 2000,
        organization: 'Ferretería Sur',
      },
      ['duena@empresa.cl'],
    );
    expect(m.subject).to.equal(
      'Aviso de consumo: Ferretería Sur usó el 80 % de sus documentos de noviembre de 2026',
    );
    expect(m.text).to.contain('emitió 1.600 de 2.000 documentos');
    expect(m.text).to.contain('en producción durante noviembre de 2026');
  });
});
