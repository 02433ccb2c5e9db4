import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { parseRupees } from '../../src/platform/money';

describe('ESTAMP_FEE_PER_STAMP', () => {
  // The configuration reads the fee without platform/money (it imports nothing of src/): the two must agree.
  it.each(['0', '2.5', '2.50', '10', '10.00', '0000012.05', '9999999.99', '7.1'])(
    'reads %s in paise as parseRupees does',
    (fee) => {
      expect(loadConfig({ ESTAMP_FEE_PER_STAMP: fee }).stamps.feePerStampPaise).toBe(parseRupees(fee));
    },
  );

  it.each(['1.234', '-1', ' 3', '12345678', '7.', '1e3'])('refuses %s', (fee) => {
    expect(() => loadConfig({ ESTAMP_FEE_PER_STAMP: fee })).toThrow(
      new ConfigError(['ESTAMP_FEE_PER_STAMP: rupees with at most 2 decimals']),
    );
  });
});
