import { readFileSync } from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { describe, expect, it } from 'vitest';
import { CATALOGS as MESSAGE_CATALOGS } from '../../src/modules/notifications/catalogs';
import { CERTIFICATE_CATALOGS } from '../../src/modules/esign/completion/catalogs';
import { PAGE_CATALOGS } from '../../src/modules/signer-journey/page/catalogs';
import { fontsDir } from '../../src/platform/pdf-fonts';
import { LANGUAGES, LANGUAGE_INFO, flattenMessages } from '../../src/platform/i18n';

/**
 * Every character a translation writes in its script has a glyph in the font the page serves for that script (and
 * the PDFs draw with), in both weights: a missing glyph would fall to whatever the signer's device has, or to a box.
 * Characters outside the script (Latin, digits, punctuation) are the system font's, as in English.
 */
const fontOf = (script: string, weight: string) =>
  fontkit.create(readFileSync(path.join(fontsDir(), `NotoSans${script}-${weight}.ttf`))) as unknown as {
    hasGlyphForCodePoint(codePoint: number): boolean;
  };

describe('the scripts’ fonts', () => {
  it('have a glyph for every character the catalogs and the language names write in each script', () => {
    const missing: string[] = [];
    for (const language of LANGUAGES.filter((tag) => tag !== 'en')) {
      const { script } = LANGUAGE_INFO[language];
      const fonts = ['Regular', 'Bold'].map((weight) => [weight, fontOf(script, weight)] as const);
      const inScript = new RegExp(`[\\p{Script=${script}}\\u0964\\u0965\\u200c\\u200d]`, 'u');
      const texts = [
        ...flattenMessages(MESSAGE_CATALOGS[language].messages).values(),
        ...flattenMessages(PAGE_CATALOGS[language].messages).values(),
        ...flattenMessages(CERTIFICATE_CATALOGS[language].messages).values(),
        LANGUAGE_INFO[language].native,
      ];
      const characters = new Set([...texts.join('')].filter((char) => inScript.test(char)));
      expect(characters.size, language).toBeGreaterThan(20);
      for (const char of characters) {
        for (const [weight, font] of fonts) {
          if (!font.hasGlyphForCodePoint(char.codePointAt(0)!))
            missing.push(`${language} ${weight}: U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} ${char}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
