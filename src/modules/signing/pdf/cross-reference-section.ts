import { PDFContext, PDFName, PDFObjectParser, PDFRawStream, PDFRef, PDFXRefStreamParser } from 'pdf-lib';

/** One entry of a cross-reference section: an object in use at an offset (or in an object stream), or freed. */
export interface SectionEntry {
  ref: PDFRef;
  offset: number;
  deleted: boolean;
  inObjectStream: boolean;
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
  try {
    if (!/^\s*xref\b/.test(bytes.toString('latin1', at, at + 16))) return streamSection(bytes, at, keyword);
    const entries = classicTable(bytes, at, keyword);
    // A hybrid file's update lists its compressed objects in a stream the trailer names (/XRefStm).
    const trailer = bytes.indexOf('trailer', at, 'latin1');
    const hybrid =
      trailer < 0 ? null : /\/XRefStm\s+(\d+)/.exec(bytes.toString('latin1', trailer, Math.min(keyword, trailer + 4096)));
    const stream = hybrid && Number(hybrid[1]) >= start ? streamSection(bytes, Number(hybrid[1]), keyword) : [];
    return stream === null ? null : [...entries, ...stream];
  } catch {
    return null;
  }
}

/** A cross-reference stream (an object whose dictionary says /Type /XRef) read in a context of its own. */
function streamSection(bytes: Buffer, at: number, limit: number): SectionEntry[] | null {
  const header = /^\s*\d+\s+\d+\s+obj/.exec(bytes.toString('latin1', at, at + 32));
  if (!header) return null;
  const parser = PDFObjectParser.forBytes(bytes.subarray(at + header[0].length, limit), PDFContext.create());
  const stream = parser.parseObject();
  if (!(stream instanceof PDFRawStream) || stream.dict.get(PDFName.of('Type')) !== PDFName.of('XRef')) return null;
  return PDFXRefStreamParser.forStream(stream).parseIntoContext();
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
