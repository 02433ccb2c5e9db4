import { deflateSync } from 'node:zlib';
import { CrossReferenceMismatch, lastStartxref, lazyDocument } from '../../../platform/pdf-structure';
import {
  ParseSpeeds,
  PDFDocument,
  PDFInvalidObject,
  PDFRawStream,
  PDFStream,
  type PDFContext,
  type PDFObject,
  type PDFRef,
} from 'pdf-lib';

/** What updateIncrementally answers. */
export interface IncrementalUpdate {
  /** The original bytes followed by the update; the original bytes themselves when nothing changed. */
  updated: Buffer;
  /** Where each object the update writes starts, by object number. */
  offsets: Map<number, number>;
}

/** The cross-reference section the update chains to: where it starts, its kind, and the trailer's /Size. */
interface PreviousSection {
  startxref: number;
  kind: 'table' | 'stream';
  size: number;
}

interface Snapshot {
  object: PDFObject;
  text: string;
  contents?: Uint8Array;
}

/** The bytes of the objects rawObject made: written with one copy (pdf-lib copies an invalid object byte by byte). */
const rawBytes = new WeakMap<PDFObject, Buffer>();

/** An object written as these bytes, verbatim (a dictionary with placeholders to fill after writing). */
export function rawObject(body: string | Uint8Array): PDFObject {
  const bytes =
    typeof body === 'string' ? Buffer.from(body, 'latin1') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const object = PDFInvalidObject.of(bytes);
  rawBytes.set(object, bytes);
  return object;
}

/**
 * The one way the service changes a PDF: an incremental update (ISO 32000-1 7.5.6). The document is opened with
 * pdf-lib, each object read where the cross-reference sections place it when it is first looked up (lazy-document.ts),
 * and changed through pdf-lib's API by `change`; then exactly the objects that changed or were added are
 * appended after the original bytes, with a cross-reference section for them and a trailer chained (/Prev) to
 * the previous one. The original bytes stay a prefix of the result, so every signature already in the document
 * keeps covering what it covered.
 *
 * "Changed" is found by comparing each indirect object read, as read and after `change`: its serialization (a stream's
 * dictionary only), the object itself (replaced or not) and, for a stream, its contents (the same bytes or not).
 * Objects pdf-lib reads from object streams are written as plain objects when they change. A change must not
 * delete objects, nor edit a stream's bytes in place (replace the stream instead). A damaged document whose last
 * startxref leads to no cross-reference section (pdf-lib reads it by scanning its objects) gets an update that
 * carries every object, with a complete section and no /Prev.
 */
export async function updateIncrementally(
  pdf: Uint8Array,
  change: (doc: PDFDocument) => void | Promise<void>,
): Promise<IncrementalUpdate> {
  // A view, not a copy: a 50 MB document should cost one copy (the output), not three.
  const original = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const previous = previousSection(original);
  if (previous) {
    // Read through the cross-reference sections: only the objects the change looks up are parsed.
    const before = new Map<PDFRef, Snapshot>();
    try {
      const doc = lazyDocument(original, previous.startxref, (ref, object) => before.set(ref, snapshotOf(object)));
      if (doc) return await appendChange(original, previous, doc, before, change);
    } catch (error) {
      if (!(error instanceof CrossReferenceMismatch)) throw error;
    }
  }
  // Sections that cannot be followed (a damaged file, objects not where they say): parsed whole, in one go (no
  // yielding between objects: it runs in a worker thread, on one request's document), as pdf-lib reads it.
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest });
  const before = new Map<PDFRef, Snapshot>();
  if (previous) for (const [ref, object] of doc.context.enumerateIndirectObjects()) before.set(ref, snapshotOf(object));
  return appendChange(original, previous, doc, before, change);
}

/** Runs `change` on `doc` and appends what it changed or added (`before` holds each object as it was read). */
async function appendChange(
  original: Buffer,
  previous: PreviousSection | undefined,
  doc: PDFDocument,
  before: Map<PDFRef, Snapshot>,
  change: (doc: PDFDocument) => void | Promise<void>,
): Promise<IncrementalUpdate> {
  const context = doc.context;
  // New objects are numbered after every number the document uses, object streams and xref streams included
  // (pdf-lib does not count those).
  if (previous) context.largestObjectNumber = Math.max(context.largestObjectNumber, previous.size - 1);
  // A cross-reference stream takes the first new number, before the change's objects: the update's largest number
  // is then an object pdf-lib reads (it skips xref streams), so a pdf-lib reader's next number is the free one.
  const xrefNumber = previous?.kind === 'stream' ? context.nextRef().objectNumber : undefined;

  await change(doc);
  // Fonts, images and pages embedded by the change become objects here (as in pdf-lib's save).
  await doc.flush();

  const written = objectsToWrite(context, before, previous);
  if (written.length === 0 && previous) return { updated: original, offsets: new Map() };

  const parts: Buffer[] = [original, Buffer.from('\n', 'latin1')];
  let offset = original.length + 1;
  const offsets = new Map<number, number>();
  const entries: XrefEntry[] = [];
  for (const [ref, object] of written.sort(
    ([a], [b]) => a.objectNumber - b.objectNumber || a.generationNumber - b.generationNumber,
  )) {
    const chunk = indirectObject(ref, object);
    offsets.set(ref.objectNumber, offset);
    entries.push({ objectNumber: ref.objectNumber, generation: ref.generationNumber, offset });
    parts.push(chunk);
    offset += chunk.length;
  }

  parts.push(...sectionAndTrailer(context, previous, xrefNumber, entries, offset));
  return { updated: Buffer.concat(parts), offsets };
}

/**
 * The objects the update writes: those `change` added or changed, or every object when there is no section to chain
 * to. Refuses a change that deleted objects.
 */
function objectsToWrite(
  context: PDFContext,
  before: Map<PDFRef, Snapshot>,
  previous: PreviousSection | undefined,
): [PDFRef, PDFObject][] {
  const written: [PDFRef, PDFObject][] = [];
  const after = context.enumerateIndirectObjects();
  for (const [ref, object] of after) {
    const earlier = before.get(ref);
    // Without a cross-reference section to chain to (a damaged file that pdf-lib repaired on reading), the update
    // carries every object, and its section is complete: the file reads the same as pdf-lib read it.
    if (!previous || !earlier || isChanged(earlier, object)) written.push([ref, object]);
  }
  if (after.length < before.size) {
    const remaining = new Set(after.map(([ref]) => ref));
    const removed = [...before.keys()].filter((ref) => !remaining.has(ref));
    if (removed.length > 0) throw new Error(`an incremental update cannot delete objects (${removed.join(', ')})`);
  }
  return written;
}

/**
 * The update's cross-reference section (`entries`, the objects written before `offset`) and its trailer, chained to
 * the previous section when there is one, and ending the file (startxref, %%EOF).
 */
function sectionAndTrailer(
  context: PDFContext,
  previous: PreviousSection | undefined,
  xrefNumber: number | undefined,
  entries: XrefEntry[],
  offset: number,
): Buffer[] {
  const { Root, Info, ID } = context.trailerInfo;
  if (!Root) throw new Error('the document has no catalog');
  const trailer = [
    `/Root ${Root.toString()}`,
    ...(Info ? [`/Info ${Info.toString()}`] : []),
    ...(ID ? [`/ID ${ID.toString()}`] : []),
  ];
  if (previous && xrefNumber !== undefined) {
    // The previous section is a cross-reference stream: so is this one, and it lists itself. A table chained to a
    // stream is not defined by ISO 32000-1 (only hybrid files mix them, through /XRefStm), some readers refuse it,
    // and the PDF TWG agreed that updates never go from streams back to tables (pdf-association/pdf-issues#523).
    entries.push({ objectNumber: xrefNumber, generation: 0, offset });
    const size = Math.max(previous.size, context.largestObjectNumber + 1);
    return [
      xrefStream(xrefNumber, size, entries, [...trailer, `/Prev ${previous.startxref}`]),
      Buffer.from(`\nstartxref\n${offset}\n%%EOF\n`, 'latin1'),
    ];
  }
  const size = Math.max(previous?.size ?? 0, context.largestObjectNumber + 1);
  const dictionary = [`/Size ${size}`, ...trailer, ...(previous ? [`/Prev ${previous.startxref}`] : [])];
  return [
    Buffer.from(
      `${xrefTable(entries, !previous)}trailer\n<< ${dictionary.join(' ')} >>\nstartxref\n${offset}\n%%EOF\n`,
      'latin1',
    ),
  ];
}

function snapshotOf(object: PDFObject): Snapshot {
  if (object instanceof PDFStream) {
    return { object, text: object.dict.toString(), contents: object instanceof PDFRawStream ? object.contents : undefined };
  }
  return { object, text: object.toString() };
}

function isChanged(earlier: Snapshot, object: PDFObject): boolean {
  if (earlier.object !== object) return true;
  const now = snapshotOf(object);
  return now.text !== earlier.text || now.contents !== earlier.contents;
}

function indirectObject(ref: PDFRef, object: PDFObject): Buffer {
  const head = `${ref.objectNumber} ${ref.generationNumber} obj\n`;
  const raw = rawBytes.get(object);
  const size = raw ? raw.length : object.sizeInBytes();
  const chunk = Buffer.allocUnsafe(head.length + size + '\nendobj\n'.length);
  chunk.write(head, 0, 'latin1');
  if (raw) raw.copy(chunk, head.length);
  else object.copyBytesInto(chunk, head.length);
  chunk.write('\nendobj\n', head.length + size, 'latin1');
  return chunk;
}

interface XrefEntry {
  objectNumber: number;
  generation: number;
  offset: number;
}

/** Runs of consecutive object numbers: one subsection each. */
function subsections(entries: XrefEntry[]): XrefEntry[][] {
  const runs: XrefEntry[][] = [];
  for (const entry of entries) {
    const run = runs.at(-1);
    if (run && run.at(-1)!.objectNumber + 1 === entry.objectNumber) run.push(entry);
    else runs.push([entry]);
  }
  return runs;
}

/** A classic cross-reference section (20-byte entries); `complete` adds object 0, the head of the free list. */
function xrefTable(entries: XrefEntry[], complete: boolean): string {
  const lines = ['xref'];
  if (complete) lines.push('0 1', '0000000000 65535 f\r');
  for (const run of subsections(entries.filter((entry) => entry.objectNumber > 0))) {
    lines.push(`${run[0].objectNumber} ${run.length}`);
    for (const entry of run) {
      lines.push(`${String(entry.offset).padStart(10, '0')} ${String(entry.generation).padStart(5, '0')} n\r`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A cross-reference stream (ISO 32000-1 7.5.8): type 1 entries, Flate-compressed. */
function xrefStream(objectNumber: number, size: number, entries: XrefEntry[], trailer: string[]): Buffer {
  const sorted = [...entries].sort((a, b) => a.objectNumber - b.objectNumber);
  let offsetWidth = 1;
  while (Math.max(...sorted.map((entry) => entry.offset)) >= 2 ** (8 * offsetWidth)) offsetWidth++;
  const rowWidth = 1 + offsetWidth + 2;
  const rows = Buffer.alloc(sorted.length * rowWidth);
  sorted.forEach((entry, index) => {
    const at = index * rowWidth;
    rows[at] = 1;
    rows.writeUIntBE(entry.offset, at + 1, offsetWidth);
    rows.writeUInt16BE(entry.generation, at + 1 + offsetWidth);
  });
  const index = subsections(sorted).flatMap((run) => [run[0].objectNumber, run.length]);
  const data = deflateSync(rows);
  const dictionary = [
    '/Type /XRef',
    `/Size ${size}`,
    `/Index [${index.join(' ')}]`,
    `/W [1 ${offsetWidth} 2]`,
    ...trailer,
    '/Filter /FlateDecode',
    `/Length ${data.length}`,
  ];
  return Buffer.concat([
    Buffer.from(`${objectNumber} 0 obj\n<< ${dictionary.join(' ')} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream\nendobj', 'latin1'),
  ]);
}

/**
 * The section the last `startxref` points to, when it is one: a classic table (`xref` ... `trailer`) or a
 * cross-reference stream (an object whose dictionary says /Type /XRef), with the trailer's /Size.
 */
function previousSection(original: Buffer): PreviousSection | undefined {
  const startxref = lastStartxref(original);
  if (startxref === undefined) return undefined;
  const head = original.toString('latin1', startxref, Math.min(original.length, startxref + 64));
  if (/^\s*xref\b/.test(head)) {
    const at = original.indexOf('trailer', startxref, 'latin1');
    if (at < 0) return undefined;
    const dictionary = original.toString('latin1', at, Math.min(original.length, at + 4096)).split('startxref')[0];
    const size = /\/Size\s+(\d+)/.exec(dictionary);
    return size ? { startxref, kind: 'table', size: Number(size[1]) } : undefined;
  }
  if (/^\s*\d+\s+\d+\s+obj\s*<</.test(head)) {
    const dictionary = original.toString('latin1', startxref, Math.min(original.length, startxref + 4096)).split('stream')[0];
    const size = /\/Size\s+(\d+)/.exec(dictionary);
    if (!/\/Type\s*\/XRef\b/.test(dictionary) || !size) return undefined;
    return { startxref, kind: 'stream', size: Number(size[1]) };
  }
  return undefined;
}
