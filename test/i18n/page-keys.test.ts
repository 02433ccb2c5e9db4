import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_CATALOGS } from '../../src/modules/signer-journey/page/catalogs';
import { flattenMessages } from '../../src/platform/i18n';

/**
 * Every key the signing page's modules name (`t('otp.send')`, `tParts('branding.support')`) is in the English catalog:
 * a key the page asks for and no catalog has would throw on the screen that needs it, which a test of another screen
 * would not see.
 */
const ASSETS = path.join(__dirname, '../../src/modules/signer-journey/page/assets');

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? modules(path.join(dir, entry.name))
      : entry.name.endsWith('.js') && entry.name !== 'intl-messageformat.js'
        ? [path.join(dir, entry.name)]
        : [],
  );
}

describe('the signing page’s keys', () => {
  it('are all in the English catalog', () => {
    const english = flattenMessages(PAGE_CATALOGS.en.messages);
    const used = new Map<string, string>();
    for (const file of modules(ASSETS)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\bt(?:Parts)?\(\s*'([a-z0-9_.]+)'/g))
        used.set(match[1]!, path.relative(ASSETS, file));
    }
    expect(used.size).toBeGreaterThan(100);
    const missing = [...used].filter(([key]) => !english.has(key)).map(([key, file]) => `${file}: ${key}`);
    expect(missing).toEqual([]);
  });
});
