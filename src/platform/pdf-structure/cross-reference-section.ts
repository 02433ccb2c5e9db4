import {
  decodePDFRawStream,
  PDFArray,
  PDFContext,
  PDFDict,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
} from 'pdf-lib';

/** One entry of a cross-reference section: an object in use at an offset (or in an object stream), or freed. */
export interface SectionEntry {
  ref: PDFRef;
  /** The byte offset of an object in use; for an object in an object stream, that stream's object number. */
  offset: number;
  deleted: boolean;
  inObjectStream: boolean;
}

/** A cross-reference section read at its offset: its entries and its trailer (a stream's dictionary). */
export interface Section {
  entries: SectionEntry[];
  /** Absent when a table's trailer cannot be read (its entries still can). */
  trailer?: PDFDict;
}

/**
 * The entries of the cross-reference section the update's last `startxref` points to, when it lies inside the
 * update: a classic table or a cross-reference stream. Null when there is none.
 */
export function crossReferenceSection(bytes: Buffer, start: number, end: number): SectionEntry[] | null {
  const keyword = bytes.lastIndexOf('startxref', end - 1, 'latin1');
  if (keyword < start) return null;
  const found = /^startxref\s+(\d+)/.exec(bytes.toString('latin1', keyword, Math.min(end, keyword + 40)));
  const at = found ? Number(found[1]) : -1;
  if (at < start || at >= keyword) return null;
  return sectionAt(bytes, at, keyword, start)?.entries ?? null;
}

/**
 * The section at `at` (a table, with the stream a hybrid file's trailer names in /XRefStm when it starts at or after
 * `earliest`, or a cross-reference stream), read no further than `limit`. Null when there is none there.
 */
export function sectionAt(bytes: Buffer, at: number, limit: number, earliest = 0): Section | null {
  try {
    if (!/^\s*xref\b/.test(bytes.toString('latin1', at, at + 16))) return streamSection(bytes, at, limit);
    const entries = classicTable(bytes, at, limit);
    const trailer = trailerAfter(bytes, at, limit);
    // A hybrid file's update lists its compressed objects in a stream the trailer names (/XRefStm).
    const hybrid = trailer?.get(PDFName.of('XRefStm'))?.toString();
    const stream = hybrid && Number(hybrid) >= earliest ? streamSection(bytes, Number(hybrid), limit) : null;
    if (hybrid && Number(hybrid) >= earliest && !stream) return null;
    return { entries: [...entries, ...(stream?.entries ?? [])], trailer };
  } catch {
    return null;
  }
}

/** The dictionary after a table's `trailer` keyword, when there is one to read. */
function trailerAfter(bytes: Buffer, at: number, limit: number): PDFDict | undefined {
  const keyword = bytes.indexOf('trailer', at, 'latin1');
  if (keyword < 0 || keyword >= limit) return undefined;
  try {
    const parser = PDFObjectParser.forBytes(bytes.subarray(keyword + 'trailer'.length, limit), PDFContext.create());
    const trailer = parser.parseObject();
    return trailer instanceof PDFDict ? trailer : undefined;
  } catch {
    return undefined;
  }
}

/** A cross-reference stream (an object whose dictionary says /Type /XRef) read in a context of its own. */
function streamSection(bytes: Buffer, at: number, limit: number): Section | null {
  const header = /^\s*\d+\s+\d+\s+obj/.exec(bytes.toString('latin1', at, at + 32));
  if (!header) return null;
  const parser = PDFObjectParser.forBytes(bytes.subarray(at + header[0].length, limit), PDFContext.create());
  const stream = parser.parseObject();
  if (!(stream instanceof PDFRawStream) || stream.dict.get(PDFName.of('Type')) !== PDFName.of('XRef')) return null;
  return { entries: streamEntries(stream), trailer: stream.dict };
}

const numbersOf = (value: unknown): number[] | null =>
  value instanceof PDFArray && value.asArray().every((n) => n instanceof PDFNumber)
    ? value.asArray().map((n) => (n as PDFNumber).asNumber())
    : null;

/**
 * A cross-reference stream's entries (ISO 32000-1 7.5.8.3): rows of /W field widths over the /Index subsections.
 * Read here rather than by pdf-lib's PDFXRefStreamParser, which ignores /DecodeParms: qpdf, Acrobat and most
 * writers PNG-predict these rows, and pdf-lib then reads other numbers than the file's.
 */
function streamEntries(stream: PDFRawStream): SectionEntry[] {
  const widths = numbersOf(stream.dict.get(PDFName.of('W')));
  const size = stream.dict.get(PDFName.of('Size'));
  if (!widths || widths.length !== 3 || !(size instanceof PDFNumber)) throw new Error('an xref stream without /W or /Size');
  const index = numbersOf(stream.dict.get(PDFName.of('Index'))) ?? [0, size.asNumber()];
  const rowWidth = widths[0] + widths[1] + widths[2];
  const rows = unpredicted(
    decodePDFRawStream(stream).decode(),
    stream.dict.lookupMaybe(PDFName.of('DecodeParms'), PDFDict),
    rowWidth,
  );
  const field = (at: number, width: number) => {
    let value = 0;
    for (let i = 0; i < width; i++) value = value * 256 + rows[at + i];
    return value;
  };
  const entries: SectionEntry[] = [];
  let at = 0;
  for (let s = 0; s + 1 < index.length; s += 2) {
    for (let n = 0; n < index[s + 1] && at + rowWidth <= rows.length; n++, at += rowWidth) {
      // A type field of width 0 means type 1 (7.5.8.2, Table 17).
      const type = widths[0] === 0 ? 1 : field(at, widths[0]);
      const second = field(at + widths[0], widths[1]);
      const third = field(at + widths[0] + widths[1], widths[2]);
      if (type !== 0 && type !== 1 && type !== 2) continue;
      entries.push({
        ref: PDFRef.of(index[s] + n, type === 2 ? 0 : third),
        offset: second,
        deleted: type === 0,
        inObjectStream: type === 2,
      });
    }
  }
  return entries;
}

/**
 * Undoes a PNG predictor (/Predictor 10-15; one filter-type byte before each row of /Columns bytes, RFC 2083 6), the
 * only kind xref streams use (Colors 1, 8 bits). pdf-lib decodes Flate but not predictors, and nothing else here needs
 * them, so the few lines are written out rather than taking on a second PDF library.
 */
function unpredicted(data: Uint8Array, parameters: PDFDict | undefined, rowWidth: number): Uint8Array {
  const predictor = parameters?.get(PDFName.of('Predictor'));
  if (!(predictor instanceof PDFNumber) || predictor.asNumber() < 10) {
    if (predictor instanceof PDFNumber && predictor.asNumber() > 1) throw new Error('a TIFF-predicted xref stream');
    return data;
  }
  const columnsValue = parameters?.get(PDFName.of('Columns'));
  const columns = columnsValue instanceof PDFNumber ? columnsValue.asNumber() : 1;
  if (columns !== rowWidth) throw new Error('an xref stream predicted with other columns than its rows');
  const rows = Math.floor(data.length / (columns + 1));
  const out = new Uint8Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (columns + 1)];
    for (let c = 0; c < columns; c++) {
      const raw = data[r * (columns + 1) + 1 + c];
      const left = c > 0 ? out[r * columns + c - 1] : 0;
      const up = r > 0 ? out[(r - 1) * columns + c] : 0;
      const upLeft = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1] : 0;
      const predicted =
        type === 1 ? left : type === 2 ? up : type === 3 ? (left + up) >> 1 : type === 4 ? paeth(left, up, upLeft) : 0;
      out[r * columns + c] = (raw + predicted) & 0xff;
    }
  }
  return out;
}

function paeth(left: number, up: number, upLeft: number): number {
  const p = left + up - upLeft;
  const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
  return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
}

/** A classic table (`xref`, subsections of 20-byte entries), read up to its `trailer`. */
function classicTable(bytes: Buffer, at: number, limit: number): SectionEntry[] {
  const trailer = bytes.indexOf('trailer', at, 'latin1');
  const text = bytes.toString('latin1', at, trailer < 0 || trailer > limit ? limit : trailer);
  const entries: SectionEntry[] = [];
  let objectNumber = 0;
  for (const line of text.split(/\r\n|\r|\n/).slice(1)) {
    const subsection = /^\s*(\d+)\s+(\d+)\s*$/.exec(line);
    const entry = /^\s*(\d{10})\s+(\d{5})\s+([nf])\s*$/.exec(line);
    if (subsection) objectNumber = Number(subsection[1]);
    else if (entry) {
      entries.push({
        ref: PDFRef.of(objectNumber, Number(entry[2])),
        offset: Number(entry[1]),
        deleted: entry[3] === 'f',
        inObjectStream: false,
      });
      objectNumber++;
    }
  }
  return entries;
}
