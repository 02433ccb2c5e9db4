// fontkit's Indic shaper is compiled to generators that expect the regenerator runtime as a global.
import 'regenerator-runtime/runtime.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { StandardFonts, type PDFDocument, type PDFFont } from 'pdf-lib';
import { packageRoot } from '../package-root';

export type Weight = 'regular' | 'bold';

/** A stretch of text drawn in one font. */
export interface TextRun {
  text: string;
  font: PDFFont;
}

/** The Indian scripts with a font of their own, by Unicode block (Noto Sans, shaped by fontkit). */
const SCRIPTS = [
  { name: 'Devanagari', from: 0x0900, to: 0x097f },
  { name: 'Bengali', from: 0x0980, to: 0x09ff },
  { name: 'Gurmukhi', from: 0x0a00, to: 0x0a7f },
  { name: 'Gujarati', from: 0x0a80, to: 0x0aff },
  { name: 'Oriya', from: 0x0b00, to: 0x0b7f },
  { name: 'Tamil', from: 0x0b80, to: 0x0bff },
  { name: 'Telugu', from: 0x0c00, to: 0x0c7f },
  { name: 'Kannada', from: 0x0c80, to: 0x0cff },
  { name: 'Malayalam', from: 0x0d00, to: 0x0d7f },
] as const;
type Script = (typeof SCRIPTS)[number]['name'];

/** Joiners, and the danda that every one of these scripts writes with Devanagari's code points, join the run they are in. */
const JOINS_ANY_SCRIPT = /[\u200c\u200d\u0964\u0965]/;

function scriptOf(char: string): Script | null {
  const code = char.codePointAt(0)!;
  return SCRIPTS.find((script) => code >= script.from && code <= script.to)?.name ?? null;
}

/**
 * The fonts, read from the source tree (tsc does not copy them into dist/). The signing page serves the same files as
 * web fonts, so a signer's page and the PDFs draw each script with one font.
 */
export const fontsDir = () => path.join(packageRoot(__dirname), 'src', 'platform', 'pdf-fonts', 'noto');

/** Each thread reads a font file once. */
const fontBytes = new Map<string, Buffer>();
function bytesOf(script: Script, weight: Weight): Buffer {
  const file = `NotoSans${script}-${weight === 'bold' ? 'Bold' : 'Regular'}.ttf`;
  let bytes = fontBytes.get(file);
  if (!bytes) {
    bytes = readFileSync(path.join(fontsDir(), file));
    fontBytes.set(file, bytes);
  }
  return bytes;
}

/** Text Helvetica's WinAnsi encoding can show: accents dropped, other characters `?`. */
export function printable(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\u2013\u2014]/g, '-')
    .replace(/\t/g, ' ')
    .replace(/[^\x20-\x7e\n]/g, '?');
}

/**
 * Text of any Indian script on a PDF page. Latin text is Helvetica, the font every reader has (so a document in
 * English embeds no font); a stretch in an Indian script is drawn in that script's Noto Sans, embedded as a subset
 * and shaped by fontkit (conjuncts, vowel signs in their place). pdf-lib draws one font per call and has no font
 * fallback, hence the runs here. Text of other scripts shows as Helvetica can (`printable`).
 */
export class ScriptText {
  private readonly embedded = new Map<string, PDFFont>();
  private readonly used = new Set<PDFFont>();

  private constructor(private readonly latin: Record<Weight, PDFFont>) {}

  /** Whether any of `texts` is in a script that needs a font of its own. */
  static needsFonts(texts: string[]): boolean {
    return texts.some((text) => [...text].some((char) => scriptOf(char) !== null));
  }

  /**
   * Embeds Helvetica and the fonts `texts` need (all fonts are embedded before drawing, which is synchronous), in
   * `weights` (both by default).
   */
  static async forDocument(
    doc: PDFDocument,
    texts: string[],
    weights: readonly Weight[] = ['regular', 'bold'],
  ): Promise<ScriptText> {
    const latin = {
      regular: await doc.embedFont(StandardFonts.Helvetica),
      bold: await doc.embedFont(StandardFonts.HelveticaBold),
    };
    const text = new ScriptText(latin);
    const needed = new Set<Script>();
    for (const value of texts) {
      for (const char of value) {
        const script = scriptOf(char);
        if (script) needed.add(script);
      }
    }
    if (needed.size > 0) doc.registerFontkit(fontkit);
    for (const script of needed) {
      for (const weight of weights) {
        text.embedded.set(`${script}-${weight}`, await doc.embedFont(bytesOf(script, weight), { subset: true }));
      }
    }
    return text;
  }

  /** The runs `text` is drawn in. */
  runs(text: string, weight: Weight): TextRun[] {
    const pieces: { script: Script | null; text: string }[] = [];
    for (const char of text) {
      const last = pieces.at(-1);
      const script = scriptOf(char) ?? (JOINS_ANY_SCRIPT.test(char) ? (last?.script ?? 'Devanagari') : null);
      if (last && last.script === script) last.text += char;
      else pieces.push({ script, text: char });
    }
    return pieces.map((piece) => this.run(piece.script, piece.text, weight));
  }

  /**
   * Writes the objects of every font used so far into the document now, subsets with the glyphs drawn. `PDFDocument.save`
   * does it by itself; an incremental update, which writes objects without saving, calls this after drawing.
   */
  async writeFonts(): Promise<void> {
    for (const font of this.used) await font.embed();
  }

  widthOf(text: string, weight: Weight, size: number): number {
    return this.runs(text, weight).reduce((sum, run) => sum + run.font.widthOfTextAtSize(run.text, size), 0);
  }

  private run(script: Script | null, text: string, weight: Weight): TextRun {
    const font = script ? this.embedded.get(`${script}-${weight}`) : undefined;
    // A script whose font was not embedded (text not given to forDocument) prints as Helvetica can.
    const drawn = font ? { text, font } : { text: printable(text), font: this.latin[weight] };
    this.used.add(drawn.font);
    return drawn;
  }
}
