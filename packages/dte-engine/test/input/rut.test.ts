import { expect } from 'chai';
import { isValidRut, normalizeRut, rutCheckDigit } from '../../src/input';

describe('input: RUT modulo 11', () => {
  it('check digits computed by hand (weights 2..7 from the right; 11 -> 0, 10 -> K)', () => {
    // 7 6 0 8 6 4 2 8: 8*2+2*3+4*4+6*5+8*6+0*7+6*2+7*3 = 149; 149 % 11 = 6; 11 - 6 = 5
    expect(rutCheckDigit('76086428')).to.equal('5');
    // 7 x (2+3+4+5+6+7+2+3) = 224; 224 % 11 = 4; 11 - 4 = 7
    expect(rutCheckDigit(77777777)).to.equal('7');
    // SII 60803000: 0+0+0+3*5+0+8*7+0+6*3 = 89; 89 % 11 = 1; 11 - 1 = 10 -> K
    expect(rutCheckDigit('60803000')).to.equal('K');
    // 14: 4*2 + 1*3 = 11; 11 % 11 = 0; 11 - 0 = 11 -> 0
    expect(rutCheckDigit(14)).to.equal('0');
    // 6: 12 % 11 = 1 -> K
    expect(rutCheckDigit('6')).to.equal('K');
    // 55555555: 5 x 32 = 160; 160 % 11 = 6; 11 - 6 = 5
    expect(rutCheckDigit('55555555')).to.equal('5');
  });

  it('isValidRut accepts the right digit, either case of K, and nothing else', () => {
    expect(isValidRut('76086428-5')).to.equal(true);
    expect(isValidRut('60803000-K')).to.equal(true);
    expect(isValidRut('60803000-k')).to.equal(true);
    expect(isValidRut('14-0')).to.equal(true);
    expect(isValidRut('76086428-6')).to.equal(false);
    expect(isValidRut('60803000-0')).to.equal(false);
    expect(isValidRut('76.086.428-5')).to.equal(false);
    expect(isValidRut('760864285')).to.equal(false);
    expect(isValidRut('123456789-0')).to.equal(false);
    expect(isValidRut('')).to.equal(false);
  });

  it('normalizeRut gives the SII form', () => {
    expect(normalizeRut('060803000-k')).to.equal('60803000-K');
  });
});
