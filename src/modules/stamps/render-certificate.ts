import { createHash } from 'node:crypto';
import {
  PDFContentStream,
  PDFDocument,
  PDFName,
  StandardFonts,
  degrees,
  drawLinesOfText,
  drawRectangle,
  rgb,
  type Color,
  type PDFFont,
  type PDFOperator,
} from 'pdf-lib';
import { formatRupees } from '../../platform/money';
import { ScriptText, type Weight } from '../../platform/pdf-fonts';
import type { ProcuredStamp } from './vendors/vendor';

/** What every certificate of an order shares: plain data, so that it crosses to a worker thread as it is. */
export interface OrderCertificateFacts {
  order: {
    id: string;
    userId: string;
    stateCode: string;
    articleId: string;
    description: string | null;
    considerationPaise: bigint;
    firstPartyName: string;
    firstPartyAddress: string | null;
    secondPartyName: string;
    dutyPaise: bigint;
  };
  stateName: string;
  articleName: string;
  /** Printed across the page for sandbox and mock stamps, which have no legal force. */
  watermark?: string;
}

/** A rendered certificate and its SHA-256 (hex), as the file row keeps it. */
export interface RenderedCertificate {
  pdf: Uint8Array;
  sha256: string;
}

const A4: [number, number] = [595.28, 841.89];
const INK = rgb(0.1, 0.15, 0.35);
const BLACK = rgb(0, 0, 0);
/** The page's resource names: fixed, so that the shared content can name them before any document exists. */
const REGULAR = 'F1';
const BOLD = 'F2';
const WATERMARK_STATE = 'GS1';
/** Where a value column starts and how wide it wraps (characters). */
const VALUE_X = 230;
const VALUE_WIDTH = 62;

type StampField = 'certificateNumber' | 'issuedAt' | 'reference' | 'verificationCode';

/** Draws one line of the certificate (its font, by weight, is the painter's). */
type Pen = (line: string, weight: Weight, options: { x: number; y: number; size: number; color: Color }) => void;

/**
 * Lays out the text every certificate of the order shares, with `pen`, and answers the line each stamp's own values
 * go on. The frame and the watermark are the painter's.
 */
function layOutSharedText(facts: OrderCertificateFacts, pen: Pen): Record<StampField, number> {
  const { order } = facts;
  pen('e-Stamp Certificate', 'bold', { x: 56, y: 770, size: 22, color: INK });
  pen(`${facts.stateName} (${order.stateCode})`, 'regular', { x: 56, y: 745, size: 13, color: INK });
  const rows: [string, string | StampField][] = [
    ['Certificate No.', 'certificateNumber'],
    ['Certificate Issued Date', 'issuedAt'],
    ['Unique Doc. Reference', 'reference'],
    ['Account Reference', `=${order.userId}`],
    ['Description of Document', `=${order.articleId}: ${facts.articleName}`],
    ['Property Description', `=${order.description ?? '-'}`],
    ['Consideration Price (Rs.)', `=${formatRupees(order.considerationPaise)}`],
    ['First Party', `=${order.firstPartyName}`],
    ['First Party Address', `=${order.firstPartyAddress ?? '-'}`],
    ['Second Party', `=${order.secondPartyName}`],
    ['Stamp Duty Paid By', `=${order.firstPartyName}`],
    ['Stamp Duty Amount (Rs.)', `=${formatRupees(order.dutyPaise)}`],
    ['Verification Code', 'verificationCode'],
  ];
  const slots = {} as Record<StampField, number>;
  let y = 690;
  for (const [label, value] of rows) {
    pen(label, 'bold', { x: 56, y, size: 10, color: INK });
    if (value.startsWith('=')) {
      for (const line of wrap(value.slice(1), VALUE_WIDTH)) {
        pen(line, 'regular', { x: VALUE_X, y, size: 10, color: BLACK });
        y -= 14;
      }
    } else {
      // A stamp's own values are one line each (numbers, a time, ids), so the layout is the order's.
      slots[value as StampField] = y;
      y -= 14;
    }
    y -= 8;
  }
  pen('Verify this certificate with its number and verification code.', 'regular', { x: 56, y: 60, size: 9, color: BLACK });
  return slots;
}

const FRAME = { x: 28, y: 28, width: A4[0] - 56, height: A4[1] - 56, borderColor: INK, borderWidth: 2 };
const WATERMARK = { x: 90, y: 120, rotate: 30, color: rgb(0.85, 0.2, 0.2), opacity: 0.25 };
/** Diagonally across the lower half, sized to stay inside the frame. */
const watermarkSize = (bold: PDFFont, watermark: string) => Math.min(40, 520 / (bold.widthOfTextAtSize(watermark, 1) || 1));

/** The texts of an order that its certificate prints, to find the scripts they are in. */
function orderTexts(facts: OrderCertificateFacts): string[] {
  const { order } = facts;
  return [order.description, order.firstPartyName, order.firstPartyAddress, order.secondPartyName, facts.articleName].filter(
    (text): text is string => !!text,
  );
}

/**
 * An order's certificate page, prepared once: the frame, the labels, the order's own values and the watermark are
 * laid out and compressed one time, and each stamp's certificate only adds its four values (number, issue time,
 * reference, verification code) as a small second content stream. A 5000-stamp order draws and deflates its
 * shared page once instead of 5000 times (issue 22); the page a reader sees is the same.
 *
 * An order whose names or addresses are in an Indian script is drawn with that script's font (ScriptText): its page
 * is prepared once as a whole PDF, fonts included, and each stamp loads it and adds its values.
 */
export class CertificateTemplate {
  private constructor(
    private readonly order: OrderCertificateFacts['order'],
    /** The shared content stream (FlateDecode-compressed) and the font that encodes the values, or a whole page. */
    private readonly shared:
      | { kind: 'content'; content: Uint8Array; regular: PDFFont; watermarkOpacity: number | undefined }
      | { kind: 'page'; pdf: Uint8Array },
    /** The line each per-stamp value is printed on. */
    private readonly slots: Record<StampField, number>,
  ) {}

  static async prepare(facts: OrderCertificateFacts): Promise<CertificateTemplate> {
    if (ScriptText.needsFonts(orderTexts(facts))) return CertificateTemplate.prepareWithFonts(facts);
    // A scratch document lends its fonts' metrics and text encoding; nothing of it is saved.
    const scratch = await PDFDocument.create();
    const fonts = {
      regular: await scratch.embedFont(StandardFonts.Helvetica),
      bold: await scratch.embedFont(StandardFonts.HelveticaBold),
    };
    const ops: PDFOperator[] = [
      ...drawRectangle({ ...FRAME, color: undefined, rotate: degrees(0), xSkew: degrees(0), ySkew: degrees(0) }),
    ];
    const slots = layOutSharedText(facts, (line, weight, options) =>
      ops.push(...lines([fonts[weight].encodeText(printable(line))], weight === 'bold' ? BOLD : REGULAR, options)),
    );
    if (facts.watermark) {
      ops.push(
        ...lines([fonts.bold.encodeText(printable(facts.watermark))], BOLD, {
          ...WATERMARK,
          size: watermarkSize(fonts.bold, facts.watermark),
          graphicsState: WATERMARK_STATE,
        }),
      );
    }
    const content = PDFContentStream.of(scratch.context.obj({}), ops, true).getContents();
    return new CertificateTemplate(
      facts.order,
      { kind: 'content', content, regular: fonts.regular, watermarkOpacity: facts.watermark ? WATERMARK.opacity : undefined },
      slots,
    );
  }

  private static async prepareWithFonts(facts: OrderCertificateFacts): Promise<CertificateTemplate> {
    const doc = await PDFDocument.create();
    const fonts = await ScriptText.forDocument(doc, orderTexts(facts));
    const page = doc.addPage(A4);
    page.drawRectangle(FRAME);
    const slots = layOutSharedText(facts, (line, weight, options) => {
      let x = options.x;
      for (const run of fonts.runs(line, weight)) {
        page.drawText(run.text, { ...options, x, font: run.font });
        x += run.font.widthOfTextAtSize(run.text, options.size);
      }
    });
    if (facts.watermark) {
      const [bold] = fonts.runs(printable(facts.watermark), 'bold');
      page.drawText(bold.text, {
        ...WATERMARK,
        rotate: degrees(WATERMARK.rotate),
        size: watermarkSize(bold.font, bold.text),
        font: bold.font,
      });
    }
    const pdf = await doc.save({ useObjectStreams: false });
    return new CertificateTemplate(facts.order, { kind: 'page', pdf }, slots);
  }

  /** One stamp's certificate: a one-page PDF in the plain fonts every reader has (and an Indian script's, if used). */
  async render(serial: number, stamp: ProcuredStamp): Promise<Uint8Array> {
    const doc = this.shared.kind === 'page' ? await PDFDocument.load(this.shared.pdf) : await PDFDocument.create();
    doc.setTitle(`e-Stamp Certificate ${stamp.certificateNumber}`);
    doc.setProducer('esign-estamp');
    doc.setCreationDate(stamp.issuedAt);
    const values: Record<StampField, string> = {
      certificateNumber: stamp.certificateNumber,
      issuedAt: stamp.issuedAt.toISOString().replace('T', ' ').slice(0, 19) + ' UTC',
      reference: `${this.order.id}/${serial}`,
      verificationCode: stamp.verificationCode,
    };
    if (this.shared.kind === 'page') {
      const page = doc.getPage(0);
      const font = await doc.embedFont(StandardFonts.Helvetica);
      for (const field of Object.keys(values) as StampField[]) {
        page.drawText(printable(values[field]), { x: VALUE_X, y: this.slots[field], size: 10, color: BLACK, font });
      }
      return doc.save({ useObjectStreams: false });
    }

    const { context } = doc;
    const page = doc.addPage(A4);
    for (const [name, baseFont] of [
      [REGULAR, 'Helvetica'],
      [BOLD, 'Helvetica-Bold'],
    ]) {
      const font = context.register(
        context.obj({ Type: 'Font', Subtype: 'Type1', BaseFont: baseFont, Encoding: 'WinAnsiEncoding' }),
      );
      page.node.setFontDictionary(PDFName.of(name), font);
    }
    if (this.shared.watermarkOpacity !== undefined) {
      page.node.setExtGState(PDFName.of(WATERMARK_STATE), context.obj({ Type: 'ExtGState', ca: this.shared.watermarkOpacity }));
    }
    page.node.addContentStream(context.register(context.stream(this.shared.content, { Filter: 'FlateDecode' })));
    const own: PDFOperator[] = [];
    for (const field of Object.keys(values) as StampField[]) {
      own.push(
        ...lines([this.shared.regular.encodeText(printable(values[field]))], REGULAR, {
          x: VALUE_X,
          y: this.slots[field],
          size: 10,
          color: BLACK,
        }),
      );
    }
    page.node.addContentStream(context.register(PDFContentStream.of(context.obj({}), own, false)));
    return doc.save({ useObjectStreams: false });
  }
}

/**
 * The certificates of several stamps of one order, for the worker-thread task that renders them off the
 * procurement job's event loop; the last few orders' templates are kept, so a thread prepares each once.
 */
export async function renderCertificates(
  facts: OrderCertificateFacts,
  stamps: { serial: number; stamp: ProcuredStamp }[],
): Promise<RenderedCertificate[]> {
  const key = JSON.stringify(facts, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  let template = recentTemplates.get(key);
  if (!template) {
    template = CertificateTemplate.prepare(facts);
    recentTemplates.set(key, template);
    if (recentTemplates.size > RECENT_TEMPLATES) recentTemplates.delete(recentTemplates.keys().next().value!);
  }
  const prepared = await template;
  const rendered: RenderedCertificate[] = [];
  for (const { serial, stamp } of stamps) {
    const pdf = await prepared.render(serial, stamp);
    rendered.push({ pdf, sha256: createHash('sha256').update(pdf).digest('hex') });
  }
  return rendered;
}

const RECENT_TEMPLATES = 8;
const recentTemplates = new Map<string, Promise<CertificateTemplate>>();

function lines(
  encoded: ReturnType<PDFFont['encodeText']>[],
  font: string,
  options: { x: number; y: number; size: number; color: Color; rotate?: number; graphicsState?: string },
): PDFOperator[] {
  return drawLinesOfText(encoded, {
    color: options.color,
    font,
    size: options.size,
    rotate: degrees(options.rotate ?? 0),
    xSkew: degrees(0),
    ySkew: degrees(0),
    x: options.x,
    y: options.y,
    lineHeight: options.size * 1.2,
    graphicsState: options.graphicsState,
  });
}

/** Helvetica only encodes WinAnsi: anything else is replaced rather than failing the whole certificate. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}

function wrap(text: string, width: number): string[] {
  const words = text.split(/\s+/);
  const result: string[] = [];
  let line = '';
  for (const word of words) {
    if ((line + ' ' + word).trim().length > width && line) {
      result.push(line);
      line = word;
    } else line = (line + ' ' + word).trim();
  }
  result.push(line);
  return result;
}
