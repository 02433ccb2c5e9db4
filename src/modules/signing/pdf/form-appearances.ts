import { PDFName, type PDFDict, type PDFDocument, type PDFFont, type PDFImage, type PDFRef } from 'pdf-lib';
import type { ScriptText } from '../../../platform/pdf-fonts';

/**
 * The appearance streams of form fields (ISO 32000-1 12.7.3.3 and 12.5.5): what every viewer shows of a field,
 * drawn here because no reader is asked to make them (NeedAppearances stays off: a viewer regenerating them would
 * change signed bytes' meaning). Text is drawn in the runs of ScriptText: Helvetica for Latin, each Indian script
 * in its Noto Sans subset, measured, so it fits its box.
 */

export type Alignment = 'left' | 'center' | 'right';
export interface Area {
  width: number;
  height: number;
}
export interface TextStyle {
  fontSize: number;
  alignment: Alignment;
  multiline?: boolean;
}

const n = (value: number) => value.toFixed(2);
const PADDING = 2;
const MIN_FONT_SIZE = 4;

/** Names for what one appearance uses (/F1 ... for fonts, /Im1 for an image), to build its /Resources. */
class Resources {
  readonly fonts = new Map<PDFFont, string>();
  image?: PDFImage;

  fontName(font: PDFFont): string {
    let name = this.fonts.get(font);
    if (!name) this.fonts.set(font, (name = `F${this.fonts.size + 1}`));
    return name;
  }

  toDict(doc: PDFDocument): PDFDict {
    const resources = doc.context.obj({});
    if (this.fonts.size > 0)
      resources.set(
        PDFName.of('Font'),
        doc.context.obj(Object.fromEntries([...this.fonts].map(([font, name]) => [name, font.ref]))),
      );
    if (this.image) resources.set(PDFName.of('XObject'), doc.context.obj({ Im1: this.image.ref }));
    return resources;
  }
}

/** A form XObject of `area` with `content`, registered in the document. */
function formXObject(doc: PDFDocument, area: Area, content: string, resources: Resources): PDFRef {
  const stream = doc.context.stream(content, {
    Type: 'XObject',
    Subtype: 'Form',
    BBox: [0, 0, area.width, area.height],
    Resources: resources.toDict(doc),
  });
  return doc.context.register(stream);
}

/** One line drawn from (x, y), run after run. */
function lineOperations(fonts: ScriptText, resources: Resources, line: string, x: number, y: number, size: number): string[] {
  let at = x;
  return fonts.runs(line, 'regular').map((run) => {
    const operation = `/${resources.fontName(run.font)} ${n(size)} Tf 1 0 0 1 ${n(at)} ${n(y)} Tm ${run.font.encodeText(run.text).toString()} Tj`;
    at += run.font.widthOfTextAtSize(run.text, size);
    return operation;
  });
}

/** Words wrapped to `width` at `size`; a word longer than a line is broken where it must be. */
function wrap(fonts: ScriptText, text: string, width: number, size: number): string[] {
  const fits = (line: string) => fonts.widthOf(line, 'regular', size) <= width;
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      const candidate = line ? `${line} ${word}` : word;
      if (fits(candidate)) line = candidate;
      else {
        if (line) lines.push(line);
        line = word;
        while (!fits(line) && [...line].length > 1) {
          const chars = [...line];
          let cut = chars.length - 1;
          while (cut > 1 && !fits(chars.slice(0, cut).join(''))) cut--;
          lines.push(chars.slice(0, cut).join(''));
          line = chars.slice(cut).join('');
        }
      }
    }
    lines.push(line);
  }
  return lines;
}

/** The lines of a text value with their baseline positions and size: one line shrunk to fit, or wrapped lines. */
function layoutText(fonts: ScriptText, text: string, area: Area, style: TextStyle) {
  const inner = area.width - 2 * PADDING;
  let size = Math.max(MIN_FONT_SIZE, Math.min(style.fontSize, area.height - PADDING));
  if (style.multiline) {
    const lines = wrap(fonts, text, inner, size);
    return { size, lines: lines.map((line, index) => ({ line, y: area.height - PADDING - size * (0.85 + index * 1.15) })) };
  }
  const widthAtOne = fonts.widthOf(text, 'regular', 1);
  if (widthAtOne * size > inner) size = Math.max(MIN_FONT_SIZE / 2, inner / widthAtOne);
  return { size, lines: [{ line: text, y: (area.height - size) / 2 + size * 0.22 }] };
}

/**
 * A text field's appearance (text, choice): the value in its style, clipped to the box; an empty field is a light
 * tint showing where it is.
 */
export function textAppearance(doc: PDFDocument, fonts: ScriptText, text: string | null, area: Area, style: TextStyle): PDFRef {
  const resources = new Resources();
  if (!text)
    return formXObject(doc, area, `/Tx BMC q 0.9 0.93 1 rg 0 0 ${n(area.width)} ${n(area.height)} re f Q EMC`, resources);
  const { size, lines } = layoutText(fonts, text, area, style);
  const operations = lines.flatMap(({ line, y }) => {
    const width = fonts.widthOf(line, 'regular', size);
    const free = area.width - 2 * PADDING - width;
    const x = PADDING + (style.alignment === 'center' ? free / 2 : style.alignment === 'right' ? free : 0);
    return lineOperations(fonts, resources, line, x, y, size);
  });
  const content = ['/Tx BMC', 'q', `0 0 ${n(area.width)} ${n(area.height)} re W n`, 'BT', '0 g', ...operations, 'ET', 'Q', 'EMC'];
  return formXObject(doc, area, content.join('\n'), resources);
}

/** A circle of radius r around (x, y), as four Bézier curves. */
function circle(x: number, y: number, r: number): string {
  const k = r * 0.5523;
  return [
    `${n(x + r)} ${n(y)} m`,
    `${n(x + r)} ${n(y + k)} ${n(x + k)} ${n(y + r)} ${n(x)} ${n(y + r)} c`,
    `${n(x - k)} ${n(y + r)} ${n(x - r)} ${n(y + k)} ${n(x - r)} ${n(y)} c`,
    `${n(x - r)} ${n(y - k)} ${n(x - k)} ${n(y - r)} ${n(x)} ${n(y - r)} c`,
    `${n(x + k)} ${n(y - r)} ${n(x + r)} ${n(y - k)} ${n(x + r)} ${n(y)} c`,
  ].join(' ');
}

/** A check box's two appearances: a frame, with a tick when on. */
export function checkboxAppearances(doc: PDFDocument, area: Area): { on: PDFRef; off: PDFRef } {
  const { width: w, height: h } = area;
  const frame = `0.6 w 0 G 0.3 0.3 ${n(w - 0.6)} ${n(h - 0.6)} re S`;
  const tick = `${n(Math.min(w, h) * 0.12)} w 1 J 1 j ${n(w * 0.22)} ${n(h * 0.52)} m ${n(w * 0.42)} ${n(h * 0.28)} l ${n(w * 0.8)} ${n(h * 0.78)} l S`;
  return {
    on: formXObject(doc, area, `q ${frame} ${tick} Q`, new Resources()),
    off: formXObject(doc, area, `q ${frame} Q`, new Resources()),
  };
}

/** One radio option's two appearances: a circle (with a dot when chosen) and the option's text beside it. */
export function radioAppearances(
  doc: PDFDocument,
  fonts: ScriptText,
  label: string,
  area: Area,
  style: TextStyle,
): { on: PDFRef; off: PDFRef } {
  const radius = Math.max(2, Math.min(area.height - 2 * PADDING, 12) / 2);
  const centre = { x: PADDING + radius, y: area.height / 2 };
  const textArea = { width: Math.max(1, area.width - 2 * radius - 2 * PADDING), height: area.height };
  const draw = (chosen: boolean) => {
    const resources = new Resources();
    const { size, lines } = layoutText(fonts, label, textArea, { ...style, multiline: false });
    const text = lines.flatMap(({ line, y }) =>
      lineOperations(fonts, resources, line, 2 * radius + 2 * PADDING + PADDING, y, size),
    );
    const dot = chosen ? `0 g ${circle(centre.x, centre.y, radius * 0.5)} f` : '';
    const content = `q 0.6 w 0 G ${circle(centre.x, centre.y, radius - 0.3)} S ${dot} BT 0 g ${text.join(' ')} ET Q`;
    return formXObject(doc, area, content, resources);
  };
  return { on: draw(true), off: draw(false) };
}

/** An image field's appearance: the image fitted in the box, its proportions kept, centred. */
export function imageAppearance(doc: PDFDocument, image: PDFImage | null, area: Area): PDFRef {
  const resources = new Resources();
  if (!image) return formXObject(doc, area, `q 0.9 0.93 1 rg 0 0 ${n(area.width)} ${n(area.height)} re f Q`, resources);
  resources.image = image;
  const scale = Math.min(area.width / image.width, area.height / image.height);
  const [width, height] = [image.width * scale, image.height * scale];
  const [x, y] = [(area.width - width) / 2, (area.height - height) / 2];
  return formXObject(doc, area, `q ${n(width)} 0 0 ${n(height)} ${n(x)} ${n(y)} cm /Im1 Do Q`, resources);
}
