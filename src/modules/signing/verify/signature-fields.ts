/**
 * Finding the signatures of a PDF the robust way, through its structure: every AcroForm field of type /Sig with a
 * value (walking /Fields and /Kids), and reading the values of a signature dictionary.
 */
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRef,
  PDFString,
  type PDFContext,
  type PDFObject,
} from 'pdf-lib';
import { CrossReferenceMismatch, documentThroughSections } from '../../../platform/pdf-structure';

/** A signed signature field: its full name, and the signature dictionary (its /V) with its reference if indirect. */
export interface FoundSignature {
  fieldName: string;
  ref: PDFRef | undefined;
  dict: PDFDict;
}

/**
 * The /Contents of every signature and document time-stamp in the document, as found through its fields: read where
 * the cross-reference sections place them (the form, its fields, their values), or through pdf-lib's whole load when
 * the sections cannot be followed.
 */
export async function signatureContents(pdf: Uint8Array): Promise<Buffer[]> {
  try {
    const doc = documentThroughSections(pdf, { ignoreEncryption: true });
    if (doc) return contentsOf(doc);
  } catch (error) {
    if (!(error instanceof CrossReferenceMismatch)) throw error;
  }
  return contentsOf(await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true }));
}

function contentsOf(doc: PDFDocument): Buffer[] {
  const contents: Buffer[] = [];
  for (const { dict } of signatureFields(doc.context, doc.catalog)) {
    const value = valueOf(dict, 'Contents');
    if (value instanceof PDFHexString || value instanceof PDFString) contents.push(Buffer.from(value.asBytes()));
  }
  return contents;
}

/** Every signed signature field (FT /Sig, inherited or not, with a /V dictionary), walking /Fields and /Kids. */
export function signatureFields(context: PDFContext, catalog: PDFDict): FoundSignature[] {
  const found: FoundSignature[] = [];
  const seen = new Set<PDFObject>();
  const acroForm = valueOf(catalog, 'AcroForm');
  const fields = acroForm instanceof PDFDict ? valueOf(acroForm, 'Fields') : undefined;

  const visit = (node: PDFObject, parentName: string | null, inheritedType: PDFObject | undefined, depth: number) => {
    const field = context.lookup(node);
    if (!(field instanceof PDFDict) || seen.has(field) || depth > 32) return;
    seen.add(field);
    const partial = text(field, 'T');
    const name = partial === null ? parentName : parentName === null ? partial : `${parentName}.${partial}`;
    const type = valueOf(field, 'FT') ?? inheritedType;
    const kids = valueOf(field, 'Kids');
    if (kids instanceof PDFArray) for (const kid of kids.asArray()) visit(kid, name, type, depth + 1);
    const value = field.get(PDFName.of('V'));
    const signature = value ? context.lookup(value) : undefined;
    if (type === PDFName.of('Sig') && signature instanceof PDFDict && !seen.has(signature)) {
      seen.add(signature);
      found.push({ fieldName: name ?? '', ref: value instanceof PDFRef ? value : undefined, dict: signature });
    }
  };
  if (fields instanceof PDFArray) for (const field of fields.asArray()) visit(field, null, undefined, 0);
  return found;
}

export function valueOf(dict: PDFDict, key: string): PDFObject | undefined {
  const value = dict.get(PDFName.of(key));
  return value === undefined ? undefined : dict.context.lookup(value);
}

export function text(dict: PDFDict, key: string): string | null {
  const value = valueOf(dict, key);
  return value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : null;
}

export function nameOf(dict: PDFDict | undefined, key: string): string | null {
  const value = dict ? valueOf(dict, key) : undefined;
  return value instanceof PDFName ? value.decodeText() : null;
}

/** A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional) as an instant; null if malformed. */
export function parsePdfDate(value: string): Date | null {
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:(Z)|([+-])(\d{2})(?:'?(\d{2}))?'?)?$/.exec(
    value.trim(),
  );
  if (!match) return null;
  const [year, month = 1, day = 1, hour = 0, minute = 0, second = 0] = match
    .slice(1, 7)
    .map((part) => (part === undefined ? undefined : Number(part)));
  const sign = match[8] === '-' ? -1 : 1;
  const offsetMinutes = match[8] ? sign * (Number(match[9]) * 60 + Number(match[10] ?? 0)) : 0;
  const time = Date.UTC(year!, month! - 1, day, hour, minute, second) - offsetMinutes * 60_000;
  const date = new Date(time);
  return Number.isNaN(time) || month! < 1 || month! > 12 || day! < 1 || day! > 31 ? null : date;
}
