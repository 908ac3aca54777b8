import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { CATALOG, catalogEntry, docsAnchor, docsUrl, httpStatusOf } from '../src';

const SPEC =
  process.env.DTE_SPEC_PATH ?? path.resolve(__dirname, '../../../../shared/spec/interface-spec.md');

describe('error catalog', () => {
  it('holds each code once', () => {
    const codes = CATALOG.map((e) => e.code);
    expect(new Set(codes).size).to.equal(codes.length);
  });

  it('answers the spec status and next_action of codes the api raises', () => {
    expect(catalogEntry('forbidden')).to.include({
      http: 403,
      nextAction: 'use_api_key_with_required_scope',
    });
    expect(catalogEntry('caf.persist_failed')).to.include({ http: 502, nextAction: null });
    expect(catalogEntry('csrf_blocked')).to.include({ http: 403 });
    expect(catalogEntry('caf.kms_unavailable')).to.include({ http: 503 });
    expect(httpStatusOf('no.such.code')).to.equal(500);
  });

  it('links documented codes only', () => {
    expect(docsAnchor('cert.kms.auth_failed')).to.equal('error-cert-kms-auth_failed');
    expect(docsUrl('rate_limit', 'https://x/errors')).to.equal('https://x/errors#error-rate_limit');
    expect(docsUrl('no.such.code', 'https://x/errors')).to.equal(undefined);
  });

  // Independent oracle: the spec's own table, parsed here, must equal the data row for row.
  (existsSync(SPEC) ? it : it.skip)('matches every row of the spec catalog table', () => {
    const text = readFileSync(SPEC, 'utf8');
    const section = text.split('### Catalog')[1].split('\n\n')[1];
    const expected: { code: string; http: number; nextAction: string | null }[] = [];
    for (const line of section.split('\n')) {
      if (!line.startsWith('| ') || line.startsWith('| Code') || line.startsWith('|---')) continue;
      const [codes, http, na] = line
        .split('|')
        .slice(1, 4)
        .map((s) => s.trim());
      const nextAction = na === 'none' ? null : na.replace(/ \(.*\)$/, '');
      for (const code of codes.split(', ')) expected.push({ code, http: Number(http), nextAction });
    }
    expect(expected.length).to.be.greaterThan(150);
    expect(CATALOG.map(({ code, http, nextAction }) => ({ code, http, nextAction }))).to.deep.equal(expected);
  });
});
