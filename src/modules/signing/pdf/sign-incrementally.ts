import { createHash } from 'node:crypto';
import {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFString,
  type PDFDocument,
  type PDFFont,
} from 'pdf-lib';
import { printable, ScriptText } from '../../../platform/pdf-fonts';
import { rawObject, updateIncrementally } from './incremental-update';
import { fieldMdpReference, fillFormFields, type FormFill } from './form-fields';
import { addSignatureField, PLACEMENTS_KEY, signatureFieldList, WET_IMAGE_KEY } from './prepare-for-signing';

/** Room for the CMS (certificates included) in the signature dictionary: 32 KB of DER. */
export const SIGNATURE_BYTES = 32_768;
const BYTE_RANGE_PLACEHOLDER = '/ByteRange [0 0000000000 0000000000 0000000000]';

/** What the signature's update shows: plain data, so the update can be built in a worker thread. */
export interface SignatureAppearance {
  /** The field prepared for this signer (`/T`). */
  fieldName: string;
  signerName: string;
  reason?: string;
  location?: string;
  time: Date;
  /** Lines drawn in each visible widget, top to bottom. */
  appearanceLines: string[];
  /** Values written into the signer's form fields in the same update, before the signature (form-fields.ts). */
  fills?: FormFill[];
}

export interface SignatureDetails extends SignatureAppearance {
  /** Produces the CMS (DER) over exactly the bytes the ByteRange covers: the two ranges, in order. */
  sign(ranges: readonly Uint8Array[]): Promise<Uint8Array>;
}

/** The document with its signature update appended and an empty /Contents at [contentsAt, contentsEnd). */
export interface PreparedSignature {
  updated: Uint8Array;
  contentsAt: number;
  contentsEnd: number;
}

/** PDF date: D:YYYYMMDDHHmmSS+00'00' */
export function pdfDate(date: Date): string {
  const iso = date.toISOString();
  return `D:${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}+00'00'`;
}

/** A text string of the signature dictionary (/Name, /Reason, /Location): UTF-16 when it is not plain ASCII. */
function textString(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? literal(text) : PDFHexString.fromText(text).toString();
}

/** A literal string Helvetica (WinAnsi) can show: what `printable` makes of it, escaped. */
function literal(text: string): string {
  return `(${printable(text)
    .replace(/\n/g, ' ')
    .replace(/([\\()])/g, '\\$1')})`;
}

function findField(doc: PDFDocument, name: string): { fieldRef: PDFRef; field: PDFDict } {
  const fields = doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict).lookup(PDFName.of('Fields'), PDFArray);
  for (const ref of fields.asArray()) {
    const field = doc.context.lookup(ref, PDFDict);
    const title = field.lookupMaybe(PDFName.of('T'), PDFString, PDFHexString);
    if (ref instanceof PDFRef && title?.decodeText() === name) return { fieldRef: ref, field };
  }
  throw new Error(`no signature field ${name} in the prepared document`);
}

/** The wet-signature image's box inside the appearance: the left part, keeping the image's proportions. */
interface ImageArea {
  width: number;
  height: number;
}

/**
 * The appearance's text in Helvetica (`/F1`), or, when a line is in an Indian script, in runs of the fonts
 * ScriptText embeds in the update (`/F1`, `/F2`, ... as `fontNames` gives them).
 */
interface AppearanceText {
  fonts?: ScriptText;
  fontNames?: Map<PDFFont, string>;
}

function appearanceStream(lines: string[], width: number, height: number, image?: ImageArea, text: AppearanceText = {}): string {
  const textLeft = image ? image.width + 8 : 4;
  const size = Math.max(4, Math.min(11, (height - 6) / Math.max(1, lines.length) / 1.25));
  const { fonts, fontNames } = text;
  // Helvetica averages about half an em per character: shrink long lines to fit the box (measured, with fonts).
  const widest = fonts
    ? Math.max(0.5, ...lines.map((line) => fonts.widthOf(line, 'regular', 1)))
    : Math.max(1, ...lines.map((line) => line.length)) * 0.56;
  const fontSize = Math.max(3, Math.min(size, (width - textLeft - 4) / widest));
  const leading = fontSize * 1.25;
  const textOperations =
    fonts && fontNames
      ? lines.flatMap((line, index) => {
          let x = textLeft;
          const y = height - 3 - fontSize - index * leading;
          return fonts.runs(line, 'regular').map((run) => {
            const at = `${fontNames.get(run.font)} ${fontSize.toFixed(2)} Tf 1 0 0 1 ${x.toFixed(2)} ${y.toFixed(2)} Tm`;
            x += run.font.widthOfTextAtSize(run.text, fontSize);
            return `${at} ${run.font.encodeText(run.text).toString()} Tj`;
          });
        })
      : [
          `/F1 ${fontSize.toFixed(2)} Tf`,
          `${textLeft.toFixed(2)} ${(height - 3 - fontSize).toFixed(2)} Td ${leading.toFixed(2)} TL`,
          ...lines.map((line, index) => `${index === 0 ? '' : 'T* '}${literal(line)} Tj`),
        ];
  const operations = [
    'q',
    // An opaque card, so the appearance stays legible over page content.
    '0.97 0.98 1 rg',
    `0 0 ${width.toFixed(2)} ${height.toFixed(2)} re f`,
    '0.12 0.23 0.55 RG 0.8 w',
    `0.4 0.4 ${Math.max(0, width - 0.8).toFixed(2)} ${Math.max(0, height - 0.8).toFixed(2)} re S`,
    ...(image
      ? [
          'q',
          `${image.width.toFixed(2)} 0 0 ${image.height.toFixed(2)} 4 ${((height - image.height) / 2).toFixed(2)} cm`,
          '/Im1 Do',
          'Q',
        ]
      : []),
    'BT',
    '0.05 0.1 0.3 rg',
    ...textOperations,
    'ET',
    'Q',
  ];
  return operations.join('\n');
}

function imageArea(stream: PDFRawStream, width: number, height: number): ImageArea {
  const pixelsWide = (stream.dict.get(PDFName.of('Width')) as PDFNumber).asNumber();
  const pixelsHigh = (stream.dict.get(PDFName.of('Height')) as PDFNumber).asNumber();
  const areaHeight = height - 6;
  const areaWidth = Math.min(width * 0.45, (areaHeight * pixelsWide) / pixelsHigh);
  return { width: areaWidth, height: (areaWidth * pixelsHigh) / pixelsWide };
}

/** The field's further placements: as the field lists them, or (fields prepared before it did) from every page. */
function placementStamps(doc: PDFDocument, fieldName: string, field: PDFDict): PDFRef[] {
  const isPlacement = (ref: unknown): ref is PDFRef => {
    if (!(ref instanceof PDFRef)) return false;
    const annotation = doc.context.lookupMaybe(ref, PDFDict);
    return !!annotation?.lookupMaybe(PDFName.of('NM'), PDFString, PDFHexString)?.decodeText().startsWith(`${fieldName}#`);
  };
  const listed = field.lookupMaybe(PDFName.of(PLACEMENTS_KEY), PDFArray);
  if (listed) return listed.asArray().filter(isPlacement);
  return doc
    .getPages()
    .flatMap((page) => (page.node.lookupMaybe(PDFName.of('Annots'), PDFArray)?.asArray() ?? []).filter(isPlacement));
}

/**
 * Signs the prepared field `fieldName` by appending one incremental update: a signature dictionary, the
 * field's value, and an appearance for each of its widgets. Nothing before the update changes, so every
 * earlier signature stays valid; the new one covers the whole file but its own /Contents.
 */
export async function signIncrementally(pdf: Uint8Array, details: SignatureDetails): Promise<Uint8Array> {
  const prepared = await buildSignatureUpdate(pdf, details);
  return fillSignature(prepared, await details.sign(signedRange(prepared)));
}

/** The parts of a prepared update a signature covers: everything but its /Contents placeholder (the byte range). */
export function signedRange(prepared: PreparedSignature): [Uint8Array, Uint8Array] {
  return [prepared.updated.subarray(0, prepared.contentsAt), prepared.updated.subarray(prepared.contentsEnd)];
}

/** The SHA-256 of a prepared update's byte range: what an ESP signs (InputHash) or a TSA stamps. */
export function signedRangeDigest(prepared: PreparedSignature): Buffer {
  const [before, after] = signedRange(prepared);
  return createHash('sha256').update(before).update(after).digest();
}

/** Writes the CMS into the /Contents the update left empty. */
export function fillSignature(prepared: PreparedSignature, cms: Uint8Array): Uint8Array {
  if (cms.length > SIGNATURE_BYTES) throw new Error(`the signature (${cms.length} bytes) does not fit its placeholder`);
  const updated = Buffer.from(prepared.updated.buffer, prepared.updated.byteOffset, prepared.updated.byteLength);
  updated.write(
    Buffer.from(cms)
      .toString('hex')
      .toUpperCase()
      .padEnd(SIGNATURE_BYTES * 2, '0'),
    prepared.contentsAt + 1,
    'latin1',
  );
  return updated;
}

/**
 * The parsing half of signIncrementally: the update with its ByteRange set and an empty /Contents. It reads the
 * whole (attacker-supplied) document, so the service runs it in the worker pool.
 */
export async function buildSignatureUpdate(
  pdf: Uint8Array,
  details: SignatureAppearance,
  /** Runs first, in the same update: what the signature is to cover with the document (appended pages, its field). */
  addBeforeSigning?: (doc: PDFDocument) => Promise<void>,
): Promise<PreparedSignature> {
  let sigRef: PDFRef | undefined;
  const { updated, offsets } = await updateIncrementally(pdf, async (doc) => {
    await addBeforeSigning?.(doc);
    const { fieldRef, field } = findField(doc, details.fieldName);
    if (field.get(PDFName.of('V'))) throw new Error(`field ${details.fieldName} is signed already`);
    await fillFormFields(doc, details.fills ?? []);
    const reference = fieldMdpReference(field, doc.context.trailerInfo.Root as PDFRef | undefined);
    sigRef = doc.context.register(rawObject(signatureDictionary(details, reference)));
    if (ScriptText.needsFonts(details.appearanceLines)) {
      // A name in an Indian script: its font goes into this update, a subset of the glyphs the widgets draw.
      const fonts = await ScriptText.forDocument(doc, details.appearanceLines, ['regular']);
      signField(doc, { fieldRef, field }, details, { sigRef, fonts });
      await fonts.writeFonts();
    } else {
      const fontRef = doc.context.register(
        rawObject('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>'),
      );
      signField(doc, { fieldRef, field }, details, { sigRef, fontRef });
    }
  });
  return setByteRange(updated, offsets.get(sigRef!.objectNumber)!);
}

const CONTENTS_PLACEHOLDER = `<${'0'.repeat(SIGNATURE_BYTES * 2)}>`;

/** The signature dictionary, with placeholders for the ByteRange and the /Contents. */
function signatureDictionary(details: SignatureAppearance, reference: string | null = null): string {
  return [
    '<<',
    '/Type /Sig',
    '/Filter /Adobe.PPKLite',
    '/SubFilter /ETSI.CAdES.detached',
    BYTE_RANGE_PLACEHOLDER,
    `/Contents ${CONTENTS_PLACEHOLDER}`,
    `/M ${literal(pdfDate(details.time))}`,
    `/Name ${textString(details.signerName)}`,
    ...(details.reason ? [`/Reason ${textString(details.reason)}`] : []),
    ...(details.location ? [`/Location ${textString(details.location)}`] : []),
    ...(reference ? [reference] : []),
    '>>',
  ].join('\n');
}

/**
 * Gives the field its value (/V, the signature dictionary), and an appearance to each of its widgets: the field
 * itself and its further placements. Each widget with an area gets an appearance stream (the lines, and the
 * wet-signature image when the widget has one) drawn in Helvetica (`fontRef`). The incremental writer appends
 * what this changes.
 */
function signField(
  doc: PDFDocument,
  { fieldRef, field }: { fieldRef: PDFRef; field: PDFDict },
  details: SignatureAppearance,
  { sigRef, fontRef, fonts }: { sigRef: PDFRef; fontRef?: PDFRef; fonts?: ScriptText },
): void {
  const context = doc.context;
  // Every widget draws the same lines: the fonts they use, and their resource names, are the signature's.
  const fontNames = new Map<PDFFont, string>();
  for (const run of fonts ? details.appearanceLines.flatMap((line) => fonts.runs(line, 'regular')) : []) {
    if (!fontNames.has(run.font)) fontNames.set(run.font, `/F${fontNames.size + 1}`);
  }
  const fontResources = fonts
    ? [...fontNames].map(([font, name]) => `${name} ${font.ref.toString()}`).join(' ')
    : `/F1 ${fontRef!.toString()}`;
  // The field is its own widget; further placements are stamp annotations named `<field>#<n>`.
  const widgets = [fieldRef, ...placementStamps(doc, details.fieldName, field)];
  for (const kidRef of widgets) {
    const widget = kidRef === fieldRef ? field : context.lookup(kidRef, PDFDict);
    const rect = widget
      .lookup(PDFName.of('Rect'), PDFArray)
      .asArray()
      .map((n) => (n as PDFNumber).asNumber());
    const width = Math.abs(rect[2] - rect[0]);
    const height = Math.abs(rect[3] - rect[1]);
    if (width > 0 && height > 0) {
      const wet = widget.get(PDFName.of(WET_IMAGE_KEY));
      const image = wet instanceof PDFRef ? imageArea(context.lookup(wet) as PDFRawStream, width, height) : undefined;
      const content = Buffer.from(
        appearanceStream(details.appearanceLines, width, height, image, { fonts, fontNames }),
        'latin1',
      );
      const xobjects = image ? ` /XObject << /Im1 ${(wet as PDFRef).toString()} >>` : '';
      const apRef = context.register(
        rawObject(
          Buffer.concat([
            Buffer.from(
              `<< /Type /XObject /Subtype /Form /BBox [0 0 ${width.toFixed(2)} ${height.toFixed(2)}] /Resources << /Font << ${fontResources} >>${xobjects} >> /Length ${content.length} >>\nstream\n`,
              'latin1',
            ),
            content,
            Buffer.from('\nendstream', 'latin1'),
          ]),
        ),
      );
      widget.set(PDFName.of('AP'), context.obj({ N: apRef }));
    }
  }
  field.set(PDFName.of('V'), sigRef);
}

/**
 * PAdES B-LTA: the document time-stamp update (ISO 32000-2 12.8.5): a new, hidden signature field whose value is
 * a /DocTimeStamp dictionary (/SubFilter /ETSI.RFC3161) with an empty /Contents, over everything before it (the
 * /DSS included). The caller stamps the SHA-256 of the two ranges and writes the token with `fillSignature`.
 */
export async function buildDocumentTimestampUpdate(pdf: Uint8Array, fieldName: string): Promise<PreparedSignature> {
  let stampRef: PDFRef | undefined;
  const { updated, offsets } = await updateIncrementally(pdf, async (doc) => {
    const context = doc.context;
    stampRef = context.register(
      rawObject(
        [
          '<<',
          '/Type /DocTimeStamp',
          '/Filter /Adobe.PPKLite',
          '/SubFilter /ETSI.RFC3161',
          BYTE_RANGE_PLACEHOLDER,
          `/Contents ${CONTENTS_PLACEHOLDER}`,
          '>>',
        ].join('\n'),
      ),
    );
    // A hidden field of its own, whose value is the time-stamp dictionary.
    const fieldRef = await addSignatureField(doc, signatureFieldList(doc), { fieldName, signatureBoxes: [] });
    context.lookup(fieldRef, PDFDict).set(PDFName.of('V'), stampRef);
  });
  return setByteRange(updated, offsets.get(stampRef!.objectNumber)!);
}

/** Sets the ByteRange: it covers everything but the /Contents hex string of this signature. */
function setByteRange(updated: Buffer, signatureStart: number): PreparedSignature {
  const contentsAt =
    updated.indexOf(`/Contents ${CONTENTS_PLACEHOLDER.slice(0, 8)}`, signatureStart, 'latin1') + '/Contents '.length;
  const contentsEnd = contentsAt + CONTENTS_PLACEHOLDER.length;
  const byteRange = `/ByteRange [0 ${contentsAt} ${contentsEnd} ${updated.length - contentsEnd}]`;
  if (byteRange.length > BYTE_RANGE_PLACEHOLDER.length) throw new Error('document too large for the ByteRange placeholder');
  const rangeAt = updated.indexOf(BYTE_RANGE_PLACEHOLDER, signatureStart, 'latin1');
  updated.write(byteRange.padEnd(BYTE_RANGE_PLACEHOLDER.length, ' '), rangeAt, 'latin1');
  return { updated, contentsAt, contentsEnd };
}
