import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef, PDFStream, type PDFObject } from 'pdf-lib';
import { verifyDetachedCms, type CmsVerification } from '../../src/modules/signing/cms-verify';
import { verifyDocumentTimestamp, type TimestampReport } from '../../src/modules/signing/verify/verify-timestamp';

/**
 * What a /ByteRange belongs to: a signature (`/Type /Sig`, a detached CMS), or a document time-stamp (PAdES
 * B-LTA: `/Type /DocTimeStamp /SubFilter /ETSI.RFC3161`, an RFC 3161 token over the ByteRange), which a completed
 * session's document ends with when PADES_LTV is on (the default).
 */
export type SignatureKind = 'signature' | 'document-timestamp';

export interface EmbeddedSignature {
  byteRange: [number, number, number, number];
  cms: Buffer;
  /** Whether the signed ranges reach the end of the file. */
  coversWholeFile: boolean;
  verification: CmsVerification;
}

export interface DocumentTimestamp {
  byteRange: [number, number, number, number];
  /** The whole /Contents: the time-stamp token and the zero padding after it. */
  token: Buffer;
  coversWholeFile: boolean;
  /** The token verifies, is signed by a time-stamping certificate and stamps the bytes the ByteRange covers. */
  verification: TimestampReport & { signatureValid: boolean; digestValid: boolean };
}

interface FoundByteRange {
  kind: SignatureKind;
  byteRange: [number, number, number, number];
  contents: Buffer;
  covered: Buffer;
}

/** Every /ByteRange of the file, in file order, with the kind of the dictionary that holds it. */
function byteRangesOf(pdf: Buffer): FoundByteRange[] {
  const text = pdf.toString('latin1');
  const found: FoundByteRange[] = [];
  const pattern = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const range = match.slice(1, 5).map(Number) as [number, number, number, number];
    // The object that holds this ByteRange: from the end of the object before it to its own endobj.
    const objectStart = Math.max(0, text.lastIndexOf('endobj', match.index));
    const objectEnd = text.indexOf('endobj', match.index);
    const object = text.slice(objectStart, objectEnd < 0 ? text.length : objectEnd);
    const timestamp = /\/Type\s*\/DocTimeStamp\b/.test(object) || /\/SubFilter\s*\/ETSI\.RFC3161\b/.test(object);
    found.push({
      kind: timestamp ? 'document-timestamp' : 'signature',
      byteRange: range,
      // The whole /Contents: the CMS and the zero padding after it (the verifiers read the DER length themselves).
      contents: Buffer.from(text.slice(range[1] + 1, range[2] - 1), 'hex'),
      covered: Buffer.concat([pdf.subarray(range[0], range[0] + range[1]), pdf.subarray(range[2], range[2] + range[3])]),
    });
  }
  return found;
}

/**
 * Every signature in a PDF, checked in-process: ByteRange, digest, CMS signature. Document time-stamps are not
 * signatures and are left out (see `documentTimestampsOf`).
 */
export async function signaturesOf(pdf: Buffer): Promise<EmbeddedSignature[]> {
  const found: EmbeddedSignature[] = [];
  for (const entry of byteRangesOf(pdf).filter((candidate) => candidate.kind === 'signature')) {
    found.push({
      byteRange: entry.byteRange,
      cms: entry.contents,
      coversWholeFile: entry.byteRange[2] + entry.byteRange[3] === pdf.length,
      verification: await verifyDetachedCms(entry.contents, entry.covered),
    });
  }
  return found;
}

/** Every document time-stamp in a PDF (PAdES B-LTA), checked in-process against the bytes its ByteRange covers. */
export async function documentTimestampsOf(pdf: Buffer): Promise<DocumentTimestamp[]> {
  const found: DocumentTimestamp[] = [];
  for (const entry of byteRangesOf(pdf).filter((candidate) => candidate.kind === 'document-timestamp')) {
    found.push({
      byteRange: entry.byteRange,
      token: entry.contents,
      coversWholeFile: entry.byteRange[2] + entry.byteRange[3] === pdf.length,
      verification: await verifyDocumentTimestamp(entry.contents, createHash('sha256').update(entry.covered).digest()),
    });
  }
  return found;
}

/**
 * Whether the last signature covers everything but the long-term updates (PAdES B-LT and B-LTA, added on completion
 * with PADES_LTV): the revision it signs is followed by exactly two incremental updates,
 * - a /DSS update: the catalog gains /DSS and nothing else of it changes, every other object added or changed is
 *   part of that /DSS (its arrays and its certificate, OCSP and CRL streams);
 * - a document time-stamp update: one hidden /Sig field whose value is a /DocTimeStamp (ETSI.RFC3161) dictionary
 *   is added, the AcroForm's /Fields and its page's /Annots gain that field, and nothing else changes;
 * and that document time-stamp covers the whole file and verifies. Returns what does not hold: empty when all does.
 */
export async function longTermTailProblems(pdf: Buffer): Promise<string[]> {
  const signatures = byteRangesOf(pdf).filter((entry) => entry.kind === 'signature');
  if (!signatures.length) return ['the document has no signature'];
  const signedEnd = Math.max(...signatures.map(({ byteRange }) => byteRange[2] + byteRange[3]));
  if (signedEnd >= pdf.length) return ['the last signature covers the whole file: no long-term update follows it'];
  const ends = [
    ...pdf
      .subarray(signedEnd)
      .toString('latin1')
      .matchAll(/%%EOF[ \t]*(?:\r\n|\r|\n)?/g),
  ].map((match) => signedEnd + match.index + match[0].length);
  if (ends.length !== 2 || ends[1] !== pdf.length) {
    return [
      `the last signature's revision is followed by ${ends.length} incremental updates, not by a /DSS update and a document time-stamp update`,
    ];
  }
  const load = (end: number) => PDFDocument.load(pdf.subarray(0, end), { updateMetadata: false, ignoreEncryption: true });
  const [signed, withDss, final] = await Promise.all([load(signedEnd), load(ends[0]!), load(pdf.length)]);
  const problems: string[] = [];

  // The /DSS update: the catalog gains /DSS; everything else it adds or changes belongs to the /DSS.
  const root = withDss.context.trailerInfo.Root as PDFRef;
  const dss = withDss.catalog.get(PDFName.of('DSS'));
  if (!dss) problems.push('the first update after the last signature adds no /DSS to the catalog');
  const inDss = reachableRefs(withDss, dss);
  for (const change of changedObjects(signed, withDss)) {
    if (change.ref === root.toString()) {
      const keys = differingKeys(change.before as PDFDict, change.after as PDFDict);
      if (keys.join() !== 'DSS') problems.push(`the /DSS update changes the catalog's ${keys.join(', ')}`);
    } else if (!inDss.has(change.ref)) {
      problems.push(`the /DSS update ${change.before ? 'changes' : 'adds'} ${change.ref}, which is not part of the /DSS`);
    }
  }

  // The document time-stamp update: a hidden /Sig field valued by a /DocTimeStamp, listed in /Fields and /Annots.
  const changes = changedObjects(withDss, final);
  const widgets = changes.filter(
    (change) => !change.before && change.after instanceof PDFDict && change.after.get(PDFName.of('FT')) === PDFName.of('Sig'),
  );
  if (widgets.length !== 1) return [...problems, `the last update adds ${widgets.length} signature fields, not one`];
  const widget = widgets[0]!;
  const widgetDict = widget.after as PDFDict;
  const valueRef = widgetDict.get(PDFName.of('V'));
  const value = final.context.lookup(valueRef);
  if (
    !(value instanceof PDFDict) ||
    value.get(PDFName.of('Type')) !== PDFName.of('DocTimeStamp') ||
    value.get(PDFName.of('SubFilter')) !== PDFName.of('ETSI.RFC3161')
  ) {
    problems.push('the field the last update adds is not a document time-stamp (/Type /DocTimeStamp, /SubFilter /ETSI.RFC3161)');
  }
  const rect = final.context.lookup(widgetDict.get(PDFName.of('Rect')));
  const [x1, y1, x2, y2] = rect instanceof PDFArray ? rect.asArray().map((n) => Number(n.toString())) : [];
  if (x1 !== x2 && y1 !== y2) problems.push('the document time-stamp field is visible');
  const appendsField = (before: PDFObject | undefined, after: PDFObject | undefined) => {
    const list = (doc: PDFDocument, object: PDFObject | undefined) => {
      const resolved = object && doc.context.lookup(object);
      return resolved instanceof PDFArray ? resolved.asArray().map(String) : [];
    };
    return list(final, after).join() === [...list(withDss, before), widget.ref].join();
  };
  for (const change of changes) {
    if (change === widget || (valueRef instanceof PDFRef && change.ref === valueRef.toString() && !change.before)) continue;
    const { before, after } = change;
    const allowed =
      before instanceof PDFArray
        ? appendsField(before, after)
        : before instanceof PDFDict &&
          after instanceof PDFDict &&
          differingKeys(before, after).every((key) => {
            const [was, is] = [before.get(PDFName.of(key)), after.get(PDFName.of(key))];
            // A page gains the widget; the AcroForm gains the field (and may set /SigFlags); an inline AcroForm.
            if (key === 'Annots' || key === 'Fields') return appendsField(was, is);
            if (key === 'SigFlags') return true;
            if (key === 'AcroForm' && was instanceof PDFDict && is instanceof PDFDict) {
              return differingKeys(was, is).every(
                (inner) =>
                  inner === 'SigFlags' ||
                  (inner === 'Fields' && appendsField(was.get(PDFName.of(inner)), is.get(PDFName.of(inner)))),
              );
            }
            return false;
          });
    if (!allowed) problems.push(`the document time-stamp update ${before ? 'changes' : 'adds'} ${change.ref}`);
  }

  const stamps = (await documentTimestampsOf(pdf)).filter((stamp) => stamp.byteRange[1] > ends[0]!);
  if (stamps.length !== 1) return [...problems, `the last update holds ${stamps.length} document time-stamps, not one`];
  const [stamp] = stamps;
  if (!stamp!.coversWholeFile) problems.push('the document time-stamp does not cover the whole file');
  if (!stamp!.verification.valid) problems.push(...stamp!.verification.problems, 'the document time-stamp does not verify');
  return problems;
}

interface ObjectChange {
  ref: string;
  before: PDFObject | undefined;
  after: PDFObject;
}

/** The objects `after` (a later revision) adds or changes against `before`. */
function changedObjects(before: PDFDocument, after: PDFDocument): ObjectChange[] {
  return after.context.enumerateIndirectObjects().flatMap(([ref, object]) => {
    const earlier = before.context.lookup(ref);
    return earlier && earlier.toString() === object.toString() ? [] : [{ ref: ref.toString(), before: earlier, after: object }];
  });
}

function differingKeys(before: PDFDict, after: PDFDict): string[] {
  const keys = new Set([...before.keys(), ...after.keys()].map((key) => key.decodeText()));
  return [...keys].filter((key) => before.get(PDFName.of(key))?.toString() !== after.get(PDFName.of(key))?.toString()).sort();
}

/** Every indirect object `start` leads to. */
function reachableRefs(doc: PDFDocument, start: PDFObject | undefined): Set<string> {
  const seen = new Set<string>();
  const walk = (object: PDFObject | undefined): void => {
    if (object instanceof PDFRef) {
      if (seen.has(object.toString())) return;
      seen.add(object.toString());
      walk(doc.context.lookup(object));
    } else if (object instanceof PDFDict) for (const [, value] of object.entries()) walk(value);
    else if (object instanceof PDFArray) for (const value of object.asArray()) walk(value);
    else if (object instanceof PDFStream) walk(object.dict);
  };
  walk(start);
  return seen;
}

export const hasPdfsig = spawnSync('pdfsig', ['-v']).status === 0;
export const hasQpdf = spawnSync('qpdf', ['--version']).status === 0;

export interface PdfsigEntry {
  /** Matched to the file's /ByteRange by the signed ranges pdfsig prints. */
  kind: SignatureKind;
  fieldName: string;
  /**
   * What pdfsig calls its type: `ETSI.CAdES.detached` for ours; poppler 22.12 prints `unknown` for a document
   * time-stamp (ETSI.RFC3161), which it cannot validate.
   */
  signatureType: string;
  /** "Signature Validation: Signature is Valid." (poppler 22.12 says "Signature has not yet been verified." of a document time-stamp). */
  valid: boolean;
  /** "Total document signed". */
  total: boolean;
}

/**
 * poppler's own verdict, one entry per signature field, document time-stamps included (`kind` tells them apart):
 * valid or not, and whether it covers the whole document.
 */
export function pdfsigReport(pdf: Buffer): PdfsigEntry[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdfsig-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    const kinds = new Map(
      byteRangesOf(pdf).map(({ kind, byteRange: [a, b, c, d] }) => [`[${a} - ${a + b}], [${c} - ${c + d}]`, kind]),
    );
    // pdfsig exits 0 even on a digest mismatch: read what it says.
    const output = spawnSync('pdfsig', [file], { encoding: 'utf8' }).stdout;
    return output
      .split(/Signature #\d+:/)
      .slice(1)
      .map((block) => {
        const signatureType = /Signature Type: (.*)/.exec(block)?.[1]?.trim() ?? '';
        const ranges = /Signed Ranges: (.*)/.exec(block)?.[1]?.trim() ?? '';
        return {
          kind: kinds.get(ranges) ?? (signatureType === 'ETSI.RFC3161' ? 'document-timestamp' : 'signature'),
          fieldName: /Signature Field Name: (.*)/.exec(block)?.[1]?.trim() ?? '',
          signatureType,
          valid: /Signature Validation: Signature is Valid\./.test(block),
          total: /Total document signed/.test(block),
        };
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function qpdfCheck(pdf: Buffer): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'qpdf-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    execFileSync('qpdf', ['--check', file], { stdio: 'pipe' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
