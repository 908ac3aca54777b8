import { expect } from 'chai';
import { ConfigError, parse, readConfig } from '../src/config';

describe('service-runtime readConfig', () => {
  it('returns defaults and parsed values', () => {
    const cfg = readConfig<{ port: number; name: string }>(
      { port: { env: 'P', default: 1, parse: parse.port }, name: { env: 'N' } },
      { P: '8080', N: 'x' },
    );
    expect(cfg).to.deep.equal({ port: 8080, name: 'x' });
  });

  it('lists every missing or malformed variable in one error', () => {
    try {
      readConfig<{ port: number; name: string }>(
        { port: { env: 'P', parse: parse.port }, name: { env: 'N' } },
        { P: 'abc' },
      );
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems).to.have.length(2);
      expect((err as Error).message)
        .to.contain('P: expected an integer')
        .and.contain('N is required');
    }
  });

  it('positiveInt takes integers above 0 and nonNegativeInt integers from 0, naming the bound otherwise', () => {
    expect(parse.positiveInt('1')).to.equal(1);
    expect(parse.nonNegativeInt('0')).to.equal(0);
    expect(() => parse.positiveInt('0')).to.throw('expected a positive integer, got 0');
    expect(() => parse.nonNegativeInt('-1')).to.throw('expected an integer >= 0, got -1');
    expect(() => parse.positiveInt('1.5')).to.throw('expected an integer, got "1.5"');
  });
});
