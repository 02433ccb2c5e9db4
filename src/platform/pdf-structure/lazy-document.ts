import {
  decodePDFRawStream,
  EncryptedPDFError,
  PDFContext,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
  type PDFObject,
} from 'pdf-lib';
// pdf-lib exports its object parser but not the byte cursor it reads with (pdf-lib is pinned; this file has not
// moved since 1.17.1's release).
import ByteStream from 'pdf-lib/cjs/core/parser/ByteStream';
import { sectionAt, type Section } from './cross-reference-section';

/**
 * Where the newest revision keeps an object: at a byte offset (type 1), in an object stream (type 2), or nowhere
 * (freed).
 */
type Location = { offset: number; generation: number } | { stream: number } | null;

/** The document's objects by number, as its cross-reference sections (newest first) place them, and its trailer. */
interface CrossReferenceIndex {
  locations: Map<number, Location>;
  trailer: PDFDict;
  size: number;
}

/** An object is not where the cross-reference sections say: the document must be read whole instead. */
export class CrossReferenceMismatch extends Error {}

/** Past this many sections the chain is taken for a loop or an attack: the document is read whole. */
const MAX_SECTIONS = 10_000;

/**
 * Every section from `startxref` back along /Prev, newest first (the first entry for an object wins). Null when a
 * section cannot be read, /Prev loops, or the newest trailer names no catalog.
 */
function crossReferenceIndex(bytes: Buffer, startxref: number, fill: Fill): CrossReferenceIndex | null {
  const locations = new Map<number, Location>();
  const visited = new Set<number>();
  let trailer: PDFDict | undefined;
  let at: number | undefined = startxref;
  while (at !== undefined) {
    if (visited.has(at) || visited.size >= MAX_SECTIONS || at < 0 || at >= bytes.length) return null;
    visited.add(at);
    const from: number = at;
    const section: Section | null = growing(fill, bytes.length, from, () => sectionAt(bytes, from, bytes.length));
    if (!section?.trailer) return null;
    trailer ??= section.trailer;
    // Within one section a hybrid file's stream entries (after the table's) stand for the table's freed ones.
    const own = new Map<number, Location>();
    for (const entry of section.entries) {
      const number = entry.ref.objectNumber;
      if (number === 0 || (entry.deleted && own.has(number))) continue;
      own.set(
        number,
        entry.deleted
          ? null
          : entry.inObjectStream
            ? { stream: entry.offset }
            : { offset: entry.offset, generation: entry.ref.generationNumber },
      );
    }
    for (const [number, location] of own) if (!locations.has(number)) locations.set(number, location);
    const previous: PDFObject | undefined = section.trailer.get(PDFName.of('Prev'));
    at = previous instanceof PDFNumber ? previous.asNumber() : undefined;
  }
  const size = trailer?.get(PDFName.of('Size'));
  if (!trailer || !(trailer.get(PDFName.of('Root')) instanceof PDFRef) || !(size instanceof PDFNumber)) return null;
  let largest = size.asNumber();
  for (const number of locations.keys()) largest = Math.max(largest, number + 1);
  return { locations, trailer, size: largest };
}

/**
 * Makes bytes [start, end) of the document readable (a SparseFile reads them from disk); a no-op when the whole
 * document is in memory.
 */
export type Fill = (start: number, end: number) => void;

const inMemory: Fill = () => undefined;

/** The first window read at an offset: a page's dictionary, a trailer or a small section fits. */
const FIRST_WINDOW = 16 * 1024;

/**
 * `read` of what starts at `offset`, with a window of the document made readable first and widened (4x) while `read`
 * fails or finds nothing, up to the document's end: an object or section larger than the window is read whole.
 */
function growing<T>(fill: Fill, length: number, offset: number, read: () => T): T {
  if (fill === inMemory) return read();
  for (let window = FIRST_WINDOW; ; window *= 4) {
    fill(offset, offset + window);
    const last = offset + window >= length;
    try {
      const result = read();
      if (result || last) return result;
    } catch (error) {
      if (last) throw error;
    }
  }
}

/**
 * The offset the file's last `startxref` names, when that offset lies before the keyword. Searched backwards from the
 * end, so a file trailed by padding or other bytes after its %%EOF is read too (as pdf.js and Acrobat read it).
 */
export function lastStartxref(bytes: Buffer, fill: Fill = inMemory): number | undefined {
  let keyword = -1;
  // Windows from the end, widened 4x: the bytes after the last startxref are read once, however many they are.
  for (let window = FIRST_WINDOW; keyword < 0; window *= 4) {
    const start = Math.max(0, bytes.length - window);
    fill(start, bytes.length);
    // Only the window is searched: the rest may not have been read.
    const within = fill === inMemory ? bytes : bytes.subarray(start);
    const found = within.lastIndexOf('startxref', within.length, 'latin1');
    keyword = found < 0 ? -1 : found + (fill === inMemory ? 0 : start);
    if (start === 0 || fill === inMemory) break;
  }
  if (keyword < 0) return undefined;
  const found = /^startxref\s+(\d+)/.exec(bytes.toString('latin1', keyword, Math.min(bytes.length, keyword + 40)));
  const startxref = found ? Number(found[1]) : undefined;
  return startxref !== undefined && startxref < keyword ? startxref : undefined;
}

/** pdf-lib's object parser, pointed at an offset of the bytes it was made for. */
class ObjectReader extends PDFObjectParser {
  constructor(bytes: Uint8Array, context: PDFContext) {
    super(ByteStream.of(bytes), context);
  }

  /** The object of `N G obj` at `offset`; a mismatch when another header (or none) is there. */
  indirectAt(offset: number, objectNumber: number, generation: number): PDFObject {
    try {
      this.bytes.moveTo(offset);
      this.skipWhitespaceAndComments();
      const number = this.parseRawInt();
      this.skipWhitespaceAndComments();
      const gen = this.parseRawInt();
      this.skipWhitespaceAndComments();
      if (number !== objectNumber || gen !== generation || !this.matchKeyword(OBJ)) throw new Error('another object');
      this.skipWhitespaceAndComments();
      return this.parseObject();
    } catch (error) {
      throw new CrossReferenceMismatch(`object ${objectNumber} is not at offset ${offset}: ${String(error)}`);
    }
  }

  /** The object that starts at `offset` (an object stream's member). */
  directAt(offset: number): PDFObject {
    this.bytes.moveTo(offset);
    this.skipWhitespaceAndComments();
    return this.parseObject();
  }
}

const OBJ = [...'obj'].map((c) => c.charCodeAt(0));

/** An object stream decoded once: its members' offsets by object number, and a reader over its bytes. */
interface ObjectStream {
  reader: ObjectReader;
  offsets: Map<number, number>;
}

function objectStream(stream: PDFObject | undefined, context: PDFContext, number: number): ObjectStream {
  if (!(stream instanceof PDFRawStream) || stream.dict.get(PDFName.of('Type')) !== PDFName.of('ObjStm')) {
    throw new CrossReferenceMismatch(`object ${number} is not an object stream`);
  }
  const count = stream.dict.get(PDFName.of('N'));
  const first = stream.dict.get(PDFName.of('First'));
  if (!(count instanceof PDFNumber) || !(first instanceof PDFNumber)) {
    throw new CrossReferenceMismatch(`object stream ${number} has no /N or /First`);
  }
  const decoded = decodePDFRawStream(stream).decode();
  const header = Buffer.from(decoded.buffer, decoded.byteOffset, Math.min(decoded.length, first.asNumber()))
    .toString('latin1')
    .trim()
    .split(/\s+/)
    .map(Number);
  const offsets = new Map<number, number>();
  for (let i = 0; i + 1 < Math.min(header.length, 2 * count.asNumber()); i += 2) {
    offsets.set(header[i], first.asNumber() + header[i + 1]);
  }
  return { reader: new ObjectReader(decoded, context), offsets };
}

/**
 * The document as pdf-lib's PDFDocument, reading each object only when it is looked up: the catalog at first, then
 * what the caller's change touches (the form, the pages, one field). A 50 MB document of scanned pages is not parsed
 * whole to sign one field; pdf-lib (1.17) reads every object on load and offers no lazy mode, hence this reader over
 * its own parser. Each object read is handed to `onRead` before anyone can change it. Undefined when the
 * cross-reference sections cannot be followed; lookups throw CrossReferenceMismatch when an object is not where they
 * say (the caller reads the document whole then).
 */
export function lazyDocument(
  bytes: Buffer,
  startxref: number,
  onRead: (ref: PDFRef, object: PDFObject) => void,
  fill: Fill = inMemory,
  { ignoreEncryption = false }: { ignoreEncryption?: boolean } = {},
): PDFDocument | undefined {
  const index = crossReferenceIndex(bytes, startxref, fill);
  if (!index) return undefined;
  const context = PDFContext.create();
  const get = (key: string) => index.trailer.get(PDFName.of(key));
  context.trailerInfo = { Root: get('Root'), Encrypt: get('Encrypt'), Info: get('Info'), ID: get('ID') };
  context.largestObjectNumber = index.size - 1;
  const reader = new ObjectReader(bytes, context);
  const streams = new Map<number, ObjectStream>();

  const read = (ref: PDFRef): PDFObject | undefined => {
    const location = index.locations.get(ref.objectNumber);
    if (!location) return undefined;
    if ('offset' in location) {
      if (location.generation !== ref.generationNumber) return undefined;
      const object = growing(fill, bytes.length, location.offset, () =>
        reader.indirectAt(location.offset, ref.objectNumber, location.generation),
      );
      // As pdf-lib's own load: the sections' streams are read for their members, never kept as objects.
      const type = object instanceof PDFRawStream ? object.dict.get(PDFName.of('Type')) : undefined;
      return type === PDFName.of('XRef') || type === PDFName.of('ObjStm') ? undefined : object;
    }
    if (ref.generationNumber !== 0) return undefined;
    let members = streams.get(location.stream);
    if (!members) {
      const streamLocation = index.locations.get(location.stream);
      if (!streamLocation || !('offset' in streamLocation)) {
        throw new CrossReferenceMismatch(`object stream ${location.stream} is not in use`);
      }
      const stream = growing(fill, bytes.length, streamLocation.offset, () =>
        reader.indirectAt(streamLocation.offset, location.stream, streamLocation.generation),
      );
      members = objectStream(stream, context, location.stream);
      streams.set(location.stream, members);
    }
    const at = members.offsets.get(ref.objectNumber);
    if (at === undefined) throw new CrossReferenceMismatch(`object ${ref.objectNumber} is not in stream ${location.stream}`);
    return members.reader.directAt(at);
  };

  const tried = new Set<PDFRef>();
  const ensureRead = (key: unknown) => {
    if (!(key instanceof PDFRef) || tried.has(key)) return;
    tried.add(key);
    let object: PDFObject | undefined;
    try {
      object = read(key);
    } catch (error) {
      // An object stream that does not decode, a member that does not parse: the whole read decides instead.
      if (error instanceof CrossReferenceMismatch) throw error;
      throw new CrossReferenceMismatch(`object ${key.toString()} cannot be read where the sections place it: ${String(error)}`);
    }
    if (object === undefined) return;
    context.assign(key, object);
    onRead(key, object);
  };
  const { lookup, lookupMaybe } = context;
  context.lookup = ((key: Parameters<PDFContext['lookup']>[0], ...types: never[]) => {
    ensureRead(key);
    return (lookup as (...args: unknown[]) => unknown).call(context, key, ...types);
  }) as PDFContext['lookup'];
  context.lookupMaybe = ((key: Parameters<PDFContext['lookupMaybe']>[0], ...types: never[]) => {
    ensureRead(key);
    return (lookupMaybe as (...args: unknown[]) => unknown).call(context, key, ...types);
  }) as PDFContext['lookupMaybe'];

  // pdf-lib's constructor is private in its types only; load() builds documents with it the same way.
  const Document = PDFDocument as unknown as new (
    context: PDFContext,
    ignoreEncryption: boolean,
    updateMetadata: boolean,
  ) => PDFDocument;
  return new Document(context, ignoreEncryption, false);
}

/**
 * The document read through its sections, to be read (nothing is recorded of what is looked up). Undefined when the
 * sections cannot be followed; lookups throw CrossReferenceMismatch as lazyDocument's do.
 */
export function documentThroughSections(pdf: Uint8Array, options: { ignoreEncryption?: boolean } = {}): PDFDocument | undefined {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const startxref = lastStartxref(bytes);
  return startxref === undefined ? undefined : lazyDocument(bytes, startxref, () => undefined, inMemory, options);
}

/**
 * The page count read through the cross-reference sections (the catalog and the page tree only). Undefined when the
 * sections cannot be followed or the tree cannot be read that way; throws pdf-lib's EncryptedPDFError.
 */
export function pageCountThroughSections(pdf: Uint8Array, fill: Fill = inMemory): number | undefined {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const startxref = lastStartxref(bytes, fill);
  if (startxref === undefined) return undefined;
  try {
    return lazyDocument(bytes, startxref, () => undefined, fill)?.getPageCount();
  } catch (error) {
    if (error instanceof EncryptedPDFError) throw error;
    return undefined;
  }
}
