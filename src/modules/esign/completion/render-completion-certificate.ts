import { PDFDocument, rgb, type PDFPage } from 'pdf-lib';
import { ScriptText, type Weight } from '../../../platform/pdf-fonts';

/** What a certificate of completion states: plain data, so it can be drawn in a worker thread. */
export interface CompletionCertificateFacts {
  sessionId: string;
  /** Every document of the envelope, in order (one for a session made with `file_id`). */
  documents: CertificateDocument[];
  createdAt: string;
  completedAt: string;
  signingOrder: string;
  /** Where the certificate goes: `appended` pages of the first signed PDF, or a file of its own. */
  appended: boolean;
  signers: CompletionSigner[];
  events: { at: string; event: string; signer: string | null; ip: string | null; details: string | null }[];
  /** Who signs the certificate (the platform's document-signing certificate subject). */
  issuer: string;
}

/** One document: its name, pages, and the fingerprints of the upload and of the signed PDF. */
export interface CertificateDocument {
  name: string;
  pageCount: number;
  original: { sha256: string; bytes: number };
  signed: { sha256: string; bytes: number };
}

export interface CompletionSigner {
  position: number;
  name: string;
  email: string | null;
  mobile: string | null;
  signType: string;
  certificateSubject: string | null;
  signedAt: string | null;
  /** The signature as the document's own verification reads it, e.g. `valid, PAdES B-T`. */
  signature: string | null;
  ip: string | null;
  userAgent: string | null;
  location: string | null;
  /** Each check passed, with its score where it has one. */
  checks: string[];
  /** The signer's fields: label (or type), the value as drawn in the document, who filled it and when. */
  fields: { label: string; shown: string | null; filled: string | null }[];
  /** The signer's part in their language, under the English rows; null for English (certificate-languages.ts). */
  inLanguage?: SignerPartInLanguage | null;
}

/** A signer's part of the certificate in the signer's language: already written, the renderer only draws it. */
export interface SignerPartInLanguage {
  heading: string;
  /** How and when they signed, in one sentence (null while unsigned). */
  statement: string | null;
  /** That this part repeats the English rows. */
  note: string;
  rows: [string, string][];
}

/** Where the platform's signature appearance goes on the last page (API units: from the top-left, y down). */
export interface CertificateSignatureBox {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const FOOTER = 40;
const SIGNATURE_AREA = 78;
const INK = rgb(0.1, 0.12, 0.2);
const MUTED = rgb(0.38, 0.4, 0.47);
const RULE = rgb(0.75, 0.78, 0.85);

/**
 * Draws the certificate of completion: the document and its fingerprints, every signer with how they signed and
 * the checks they passed, then the session's audit trail, on A4 pages numbered "page x of y", with room kept at
 * the foot of the last page for the platform's signature. Names and values in Indian scripts are drawn in their own
 * fonts (ScriptText); Latin text is Helvetica.
 */
export async function renderCompletionCertificate(
  facts: CompletionCertificateFacts,
): Promise<{ pdf: Uint8Array; signatureBox: CertificateSignatureBox }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const [first] = facts.documents;
  const several = facts.documents.length > 1;
  doc.setTitle(`Certificate of completion: ${first!.name}${several ? ` and ${facts.documents.length - 1} more` : ''}`);
  doc.setSubject(`Esign session ${facts.sessionId}`);
  doc.setCreationDate(new Date(facts.completedAt));
  const writer = new PageWriter(doc, await ScriptText.forDocument(doc, [JSON.stringify(facts)]));

  writer.title('Certificate of completion');
  writer.text(
    facts.appended
      ? 'This certificate is appended to the signed document after its last signature, and is signed by the platform.'
      : `This certificate accompanies the signed ${several ? 'documents' : 'document'} named below, and is signed by the platform.`,
    { color: MUTED, size: 9 },
  );
  writer.gap(8);

  const session: [string, string][] = [
    ['Signing order', facts.signingOrder],
    ['Started', facts.createdAt],
    ['Completed', facts.completedAt],
  ];
  if (several) {
    writer.heading(`Documents (${facts.documents.length})`);
    writer.pairs([['Session', facts.sessionId], ...session]);
    facts.documents.forEach((document, index) => {
      writer.keepTogether(90);
      writer.subheading(`${index + 1}. ${document.name}`);
      writer.pairs(fingerprints(document, facts.appended && index === 0));
    });
  } else {
    writer.heading('Document');
    const [pages, ...prints] = fingerprints(first!, facts.appended);
    writer.pairs([['Session', facts.sessionId], ['Document', first!.name], pages!, ...session, ...prints]);
  }

  writer.heading(`Signers (${facts.signers.length})`);
  for (const signer of facts.signers) drawSigner(writer, signer);

  writer.heading(`Audit trail (${facts.events.length} events)`);
  for (const event of facts.events) {
    const who = [event.signer, event.ip].filter(Boolean).join(', ');
    writer.event(event.at, event.event + (who ? ` (${who})` : ''), event.details);
  }

  writer.gap(10);
  writer.text(
    `Signed by ${facts.issuer}. Any change to this certificate invalidates that signature; check it in any PDF reader.`,
    { color: MUTED, size: 8 },
  );
  const signatureBox = writer.reserveSignatureArea();
  writer.footers(facts.sessionId);
  return { pdf: await doc.save({ useObjectStreams: false }), signatureBox };
}

/** One signer: the English rows every reader has, then their part in their language where they read another. */
function drawSigner(writer: PageWriter, signer: CompletionSigner): void {
  writer.keepTogether(150);
  writer.subheading(`${signer.position + 1}. ${signer.name}`);
  writer.pairs([
    ['Email', signer.email ?? '-'],
    ['Mobile', signer.mobile ?? '-'],
    ['Signed with', signer.signType],
    ['Certificate', signer.certificateSubject ?? '-'],
    ['Signed at', signer.signedAt ?? '-'],
    ['Signature', signer.signature ?? '-'],
    ['IP address', signer.ip ?? '-'],
    ['Browser', signer.userAgent ?? '-'],
    ['Location', signer.location ?? 'not checked'],
    ['Checks', signer.checks.length > 0 ? signer.checks.join('; ') : 'none requested'],
    ...signer.fields.map((field, index): [string, string] => [
      index === 0 ? 'Fields' : '',
      `${field.label}: ${field.shown ?? '(empty)'}${field.filled ? ` (${field.filled})` : ''}`,
    ]),
  ]);
  if (signer.inLanguage) {
    writer.keepTogether(110);
    writer.gap(4);
    writer.subheading(signer.inLanguage.heading);
    if (signer.inLanguage.statement) writer.text(signer.inLanguage.statement, { size: 9 });
    writer.text(signer.inLanguage.note, { color: MUTED, size: 8 });
    writer.gap(2);
    writer.pairs(signer.inLanguage.rows);
  }
  writer.gap(6);
}

/** A document's pages and both SHA-256s (the signed one before the certificate, where it is appended to it). */
function fingerprints(document: CertificateDocument, appended: boolean): [string, string][] {
  return [
    ['Pages', String(document.pageCount)],
    ['Original PDF', `${document.original.bytes} bytes, SHA-256`],
    ['', document.original.sha256],
    [
      'Signed PDF',
      appended
        ? `its first ${document.signed.bytes} bytes (before this certificate was appended), SHA-256`
        : `${document.signed.bytes} bytes, SHA-256`,
    ],
    ['', document.signed.sha256],
  ];
}

interface DrawOptions {
  weight?: Weight;
  size?: number;
  color?: ReturnType<typeof rgb>;
}

/** Lays text out top to bottom, starting a new page when the next block does not fit. */
class PageWriter {
  private page!: PDFPage;
  private y = 0;
  private readonly width = A4.width - 2 * MARGIN;

  constructor(
    private readonly doc: PDFDocument,
    private readonly fonts: ScriptText,
  ) {
    this.newPage();
  }

  title(text: string): void {
    this.line(text, { weight: 'bold', size: 20 });
    this.gap(4);
  }

  heading(text: string): void {
    this.keepTogether(60);
    this.gap(8);
    this.line(text, { weight: 'bold', size: 13 });
    this.page.drawLine({
      start: { x: MARGIN, y: this.y + 3 },
      end: { x: A4.width - MARGIN, y: this.y + 3 },
      thickness: 0.6,
      color: RULE,
    });
    this.gap(6);
  }

  subheading(text: string): void {
    this.line(text, { weight: 'bold', size: 10.5 });
    this.gap(2);
  }

  text(text: string, options: { color?: ReturnType<typeof rgb>; size?: number } = {}): void {
    for (const part of this.wrap(text, 'regular', options.size ?? 9, this.width)) this.line(part, options);
  }

  /** Label and value rows; long values wrap under their own column. */
  pairs(rows: [string, string][]): void {
    const labelWidth = 92;
    const size = 9;
    for (const [label, value] of rows) {
      const lines = this.wrap(value, 'regular', size, this.width - labelWidth);
      // A label longer than its column (a translated one) wraps inside it.
      const labelLines = label ? this.wrap(label, 'bold', size, labelWidth - 6) : [];
      const count = Math.max(lines.length, labelLines.length);
      this.ensure(count * size * 1.35);
      for (let index = 0; index < count; index++) {
        if (labelLines[index]) this.draw(labelLines[index]!, MARGIN, { weight: 'bold', size, color: MUTED });
        if (lines[index]) this.draw(lines[index]!, MARGIN + labelWidth, { size });
        this.y -= size * 1.35;
      }
    }
  }

  event(at: string, what: string, details: string | null): void {
    const size = 8;
    const timeWidth = 120;
    const lines = this.wrap(what, 'bold', size, this.width - timeWidth);
    const detailLines = details ? this.wrap(details, 'regular', size - 0.5, this.width - timeWidth) : [];
    this.ensure((lines.length + detailLines.length) * size * 1.3 + 2);
    this.draw(at, MARGIN, { size, color: MUTED });
    for (const part of lines) {
      this.draw(part, MARGIN + timeWidth, { weight: 'bold', size });
      this.y -= size * 1.3;
    }
    for (const part of detailLines) {
      this.draw(part, MARGIN + timeWidth, { size: size - 0.5, color: MUTED });
      this.y -= size * 1.3;
    }
    this.y -= 2;
  }

  gap(points: number): void {
    this.y -= points;
  }

  /** Starts a new page unless `height` points still fit on this one. */
  keepTogether(height: number): void {
    this.ensure(height);
  }

  /** Room for the platform's signature at the foot of the last page (a new page when the text reaches it). */
  reserveSignatureArea(): CertificateSignatureBox {
    if (this.y - SIGNATURE_AREA < FOOTER + 8) this.newPage();
    const pages = this.doc.getPageCount();
    return { page: pages - 1, x: MARGIN, y: A4.height - FOOTER - SIGNATURE_AREA, width: 260, height: SIGNATURE_AREA - 12 };
  }

  footers(sessionId: string): void {
    const pages = this.doc.getPages();
    pages.forEach((page, index) => {
      const [run] = this.fonts.runs(
        `Certificate of completion, session ${sessionId}, page ${index + 1} of ${pages.length}`,
        'regular',
      );
      page.drawText(run.text, { x: MARGIN, y: FOOTER - 16, size: 7.5, font: run.font, color: MUTED });
    });
  }

  private line(text: string, options: DrawOptions): void {
    const size = options.size ?? 9;
    this.ensure(size * 1.35);
    this.draw(text, MARGIN, options);
    this.y -= size * 1.35;
  }

  private draw(text: string, x: number, options: DrawOptions): void {
    const size = options.size ?? 9;
    for (const run of this.fonts.runs(text, options.weight ?? 'regular')) {
      this.page.drawText(run.text, { x, y: this.y - size, size, font: run.font, color: options.color ?? INK });
      x += run.font.widthOfTextAtSize(run.text, size);
    }
  }

  private ensure(height: number): void {
    if (this.y - height < FOOTER + 8) this.newPage();
  }

  private newPage(): void {
    this.page = this.doc.addPage([A4.width, A4.height]);
    this.y = A4.height - MARGIN;
  }

  /** Breaks text into lines that fit `width`, at spaces, and inside words longer than a line (hashes, ids). */
  private wrap(text: string, weight: Weight, size: number, width: number): string[] {
    const widthOf = (part: string) => this.fonts.widthOf(part, weight, size);
    const lines: string[] = [];
    for (const paragraph of text.split('\n')) {
      let current = '';
      for (const word of paragraph.split(' ')) {
        const candidate = current ? `${current} ${word}` : word;
        if (widthOf(candidate) <= width) {
          current = candidate;
          continue;
        }
        if (current) lines.push(current);
        current = '';
        let rest = word;
        while (widthOf(rest) > width) {
          let cut = rest.length - 1;
          while (cut > 1 && widthOf(rest.slice(0, cut)) > width) cut--;
          lines.push(rest.slice(0, cut));
          rest = rest.slice(cut);
        }
        current = rest;
      }
      lines.push(current);
    }
    return lines;
  }
}
