/**
 * A PDF read once with every version of every object, and the document as it read at any byte of the file. pdf-lib
 * reads a file by scanning its objects in order and keeps the last version of each; here its parser is watched so
 * every version is kept with where it ends. The revision judge (verify-revisions.ts) reads updates with it.
 */
import { PDFArray, PDFContext, PDFDict, PDFName, PDFParser, PDFRef, PDFStream, type PDFObject } from 'pdf-lib';

export interface ObjectVersion {
  /** Where the object (or the object stream holding it) ends in the file. */
  end: number;
  object: PDFObject;
}

/** A PDF read with every version of every object, in file order. */
export interface PdfHistory {
  /** The document as pdf-lib reads it: the last version of each object. */
  context: PDFContext;
  bytes: Buffer;
  versions: Map<PDFRef, ObjectVersion[]>;
  /** Every version in file order (ends never decrease): an update's objects are one run of it. */
  written: { ref: PDFRef; end: number }[];
}

/** Parses the whole file once (pdf-lib's parser, object streams unpacked), keeping each object's versions. */
export async function parseWithHistory(bytes: Buffer): Promise<PdfHistory> {
  const parser = PDFParser.forBytesWithOptions(bytes, Infinity, false);
  // The parser's context and byte position are not public: each object it assigns is recorded with the position
  // the parser has reached, the end of the object (or of the object stream that holds it).
  const internals = parser as unknown as { context: PDFContext; bytes: { offset(): number } };
  const versions = new Map<PDFRef, ObjectVersion[]>();
  const written: { ref: PDFRef; end: number }[] = [];
  const assign = internals.context.assign.bind(internals.context);
  internals.context.assign = (ref: PDFRef, object: PDFObject) => {
    const list = versions.get(ref);
    const version = { end: internals.bytes.offset(), object };
    if (list) list.push(version);
    else versions.set(ref, [version]);
    written.push({ ref, end: version.end });
    assign(ref, object);
  };
  const context = await parser.parseDocument();
  return { context, bytes, versions, written };
}

/** The document as it read at a position of the file: the last version of each object that ends before it. */
export class StateAt {
  constructor(
    private readonly history: PdfHistory,
    readonly position: number,
  ) {}

  versionOf(ref: PDFRef): ObjectVersion | undefined {
    const list = this.history.versions.get(ref);
    if (!list) return undefined;
    for (let index = list.length - 1; index >= 0; index--) if (list[index].end <= this.position) return list[index];
    return undefined;
  }

  lookup(value: PDFObject | undefined): PDFObject | undefined {
    return value instanceof PDFRef ? this.versionOf(value)?.object : value;
  }

  get(dict: PDFDict | undefined, key: string): PDFObject | undefined {
    return dict ? this.lookup(dict.get(PDFName.of(key))) : undefined;
  }

  dict(value: PDFObject | undefined): PDFDict | undefined {
    const object = this.lookup(value);
    return object instanceof PDFDict ? object : object instanceof PDFStream ? object.dict : undefined;
  }
}

/** The pages in order (refs of the page dictionaries), walking /Pages and /Kids. */
export function pageRefs(state: StateAt, root: PDFObject | undefined): PDFRef[] {
  const pages: PDFRef[] = [];
  const seen = new Set<PDFRef>();
  const visit = (node: PDFObject | undefined, depth: number) => {
    if (!(node instanceof PDFRef) || seen.has(node) || depth > 64) return;
    seen.add(node);
    const dict = state.dict(node);
    if (!dict) return;
    const kids = state.get(dict, 'Kids');
    if (kids instanceof PDFArray) for (const kid of kids.asArray()) visit(kid, depth + 1);
    else pages.push(node);
  };
  visit(state.dict(root)?.get(PDFName.of('Pages')), 0);
  return pages;
}
