/**
 * One incremental update judged (the rules are described in verify-revisions.ts): every object it writes, added or
 * changed, described in plain words and marked when signing may not make that change; and its own cross-reference
 * section checked against what it writes.
 */
import { PDFArray, PDFDict, PDFInvalidObject, PDFName, PDFRawStream, PDFRef, PDFStream, type PDFObject } from 'pdf-lib';
import { crossReferenceSection } from '../../../platform/pdf-structure';
import { FORM_FILL_MAY_CHANGE, formFieldName, judgeFills } from './form-fills';
import { pageRefs, StateAt, type PdfHistory } from './pdf-history';

/** What one update did. */
export interface UpdateJudgement {
  /** Every change, in plain words, signatures first. */
  changes: string[];
  /** The changes signing may not make. */
  contentChanges: string[];
  /** Pages added after every earlier page, and the page tree nodes that grew to hold them: judged by the revision. */
  appendedPages: string[];
  /** Signature dictionaries (/Type /Sig) the update adds. */
  signaturesAdded: number;
  /** Form fields the update filled as its own signature allows (form-fills.ts). */
  fieldsFilled: string[];
}

type Role = 'catalog' | 'acroform' | 'fields' | 'annots' | 'dss' | 'info' | 'metadata';

/** What may change in place, by role: the keys (for dictionaries) signing may touch. */
const MAY_CHANGE: Record<'catalog' | 'acroform', Set<string>> = {
  catalog: new Set(['AcroForm', 'DSS', 'Extensions', 'Version']),
  acroform: new Set(['Fields', 'SigFlags', 'DR', 'DA', 'NeedAppearances']),
};
const SIGNATURE_WIDGET_MAY_CHANGE = new Set(['V', 'AP', 'AS', 'MK', 'F', 'DA', 'Lock', 'SV', 'P']);

/** One update (the bytes from `start` to `end`): every object it writes, each change described and judged. */
export class UpdateJudge {
  private readonly before: StateAt;
  private readonly after: StateAt;
  private readonly roles = new Map<PDFRef, Role>();
  private annots?: Set<PDFRef>;
  /** What the /DSS holds after the update, by kind: to name the streams an LTV step adds. */
  private readonly validationData = new Map<PDFRef, string>();
  private readonly signatures: string[] = [];
  private readonly others: string[] = [];
  private readonly contentChanges: string[] = [];
  private readonly appendedPages: string[] = [];
  private signaturesAdded = 0;
  /** Signature fields whose signature this update adds, and the form fields it fills. */
  private readonly signedNow = new Set<string>();
  private readonly filled: string[] = [];
  private pagesBefore?: PDFRef[];
  private pagesAfter?: PDFRef[];

  constructor(
    private readonly history: PdfHistory,
    private readonly start: number,
    private readonly end: number,
    private readonly fieldBySignature: Map<PDFRef, string>,
    private readonly pageNumbers: Map<PDFRef, number>,
  ) {
    this.before = new StateAt(history, start);
    this.after = new StateAt(history, end);
    this.assignRoles();
  }

  judge(): UpdateJudgement {
    const written = [...new Set(this.objectsWritten())].sort(
      (a, b) => a.objectNumber - b.objectNumber || a.generationNumber - b.generationNumber,
    );
    for (const ref of written) {
      const earlier = this.before.versionOf(ref)?.object;
      const now = this.after.versionOf(ref)!.object;
      if (earlier === undefined) this.added(ref, now);
      else if (!sameObject(earlier, now)) this.changed(ref, earlier, now);
    }
    this.checkCrossReferences(new Set(written));
    const fills = judgeFills(this.before, this.after, this.history.context.trailerInfo.Root, this.filled, this.signedNow);
    for (const { name, refusal } of fills) this.note(refusal ?? `form field ${name} filled`, refusal === null);
    return {
      changes: [...this.signatures, ...this.others],
      contentChanges: this.contentChanges,
      appendedPages: this.appendedPages,
      signaturesAdded: this.signaturesAdded,
      fieldsFilled: fills.filter((fill) => fill.refusal === null).map((fill) => fill.name),
    };
  }

  /**
   * Pages added after the last page: the pages before the update are, in order, the first pages after it. A page
   * tree node may then grow (/Kids, /Count) or be added to hold them; anything else in the tree is a change.
   */
  private appendsPages(): boolean {
    const root = this.history.context.trailerInfo.Root;
    this.pagesBefore ??= pageRefs(this.before, root);
    this.pagesAfter ??= pageRefs(this.after, root);
    const before = this.pagesBefore;
    const after = this.pagesAfter;
    return after.length > before.length && before.every((ref, index) => after[index] === ref);
  }

  private isAppendedPage(ref: PDFRef): boolean {
    return this.appendsPages() && this.pagesAfter!.indexOf(ref) >= this.pagesBefore!.length;
  }

  private noteAppended(text: string): void {
    this.others.push(text);
    this.appendedPages.push(text);
  }

  /** The objects whose versions end inside the update: a run of the file-ordered list, found by bisection. */
  private *objectsWritten(): Generator<PDFRef> {
    const { written } = this.history;
    let low = 0;
    let high = written.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (written[middle].end <= this.start) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < written.length && written[index].end <= this.end; index++) yield written[index].ref;
  }

  private note(text: string, allowed: boolean): void {
    this.others.push(text);
    if (!allowed) this.contentChanges.push(text);
  }

  private added(ref: PDFRef, object: PDFObject): void {
    const dict = asDict(object);
    const type = nameIn(dict, 'Type');
    const subtype = nameIn(dict, 'Subtype');
    if (type === 'Sig' || type === 'DocTimeStamp') {
      const field = this.fieldBySignature.get(ref);
      const what = type === 'Sig' ? 'signature' : 'document timestamp';
      if (type === 'Sig') this.signaturesAdded++;
      if (type === 'Sig' && field !== undefined) this.signedNow.add(field);
      this.signatures.push(field === undefined ? `${what} ${ref} added` : `${what} of field ${field} added`);
    } else if (type === 'Page' && this.isAppendedPage(ref)) {
      this.noteAppended(`page ${ref} (page ${this.pagesAfter!.indexOf(ref) + 1}) appended`);
    } else if (type === 'Pages' && this.appendsPages()) {
      this.noteAppended(`page tree node ${ref} added`);
    } else if (type === 'Page' || type === 'Pages') {
      this.note(`${type === 'Page' ? 'page' : 'page tree node'} ${ref} added`, false);
    } else if (nameIn(dict, 'FT') === 'Sig' || subtype === 'Widget') {
      this.note(`annotation ${ref} (${subtype ?? 'signature field'}) added`, true);
    } else if (type === 'Annot' || (subtype && ANNOTATION_SUBTYPES.has(subtype))) {
      this.note(`annotation ${ref} (${subtype ?? 'Annot'}) added`, true);
    } else if (this.validationData.has(ref)) {
      this.note(`validation data ${ref} (${this.validationData.get(ref)}) added`, true);
    } else if (type === 'Catalog') {
      this.note(`document catalog ${ref} added`, false);
    } else {
      // A new object shows nothing until a changed one refers to it, and those are judged on their own.
      const kind = type ?? subtype;
      this.note(`other object ${ref}${kind ? ` (${kind})` : ''} added`, true);
    }
  }

  private changed(ref: PDFRef, earlier: PDFObject, now: PDFObject): void {
    const role = this.roles.get(ref) ?? (earlier instanceof PDFArray && this.annotationLists().has(ref) ? 'annots' : undefined);
    const oldDict = asDict(earlier);
    const newDict = asDict(now);
    const keys = oldDict && newDict ? changedKeys(oldDict, newDict) : [];
    const dataChanged =
      earlier instanceof PDFRawStream &&
      now instanceof PDFRawStream &&
      !Buffer.from(earlier.contents).equals(Buffer.from(now.contents));
    const listed = [...keys.map((key) => `/${key}`), ...(dataChanged ? ['its data'] : [])].join(', ');

    if (role === 'catalog' || role === 'acroform') {
      const name = role === 'catalog' ? `document catalog ${ref}` : `form dictionary ${ref}`;
      const forbidden = keys.filter((key) => !MAY_CHANGE[role].has(key));
      const lost = role === 'acroform' && keys.includes('Fields') ? this.removed(oldDict?.get(FIELDS), newDict?.get(FIELDS)) : 0;
      const allowed = !!oldDict && !!newDict && forbidden.length === 0 && lost === 0;
      return this.note(
        allowed
          ? `${name} changed (${listed})`
          : `${name} changed (${forbidden.length > 0 ? forbidden.map((key) => `/${key}`).join(', ') : `${lost} field(s) removed`})`,
        allowed,
      );
    }
    if (role === 'fields' || role === 'annots') {
      const lost = this.removed(earlier, now);
      const what = role === 'fields' ? 'form field list' : 'annotation list';
      return this.note(lost === 0 ? `${what} ${ref} extended` : `${what} ${ref}: ${lost} entries removed`, lost === 0);
    }
    if (role === 'dss') return this.note(`validation data ${ref} (/DSS) changed`, true);
    if (role === 'info') return this.note(`document information ${ref} changed`, true);
    if (role === 'metadata') return this.note(`XMP metadata ${ref} changed`, true);

    const type = nameIn(oldDict, 'Type');
    const subtype = nameIn(oldDict, 'Subtype');
    if (type === 'Page' && newDict && nameIn(newDict, 'Type') === 'Page') {
      const number = this.pageNumbers.get(ref);
      const name = `page ${ref}${number ? ` (page ${number})` : ''}`;
      const forbidden = keys.filter((key) => key !== 'Annots');
      const lost = keys.includes('Annots') ? this.removed(oldDict!.get(ANNOTS), newDict.get(ANNOTS)) : 0;
      if (forbidden.length > 0) return this.note(`${name} changed (${forbidden.map((key) => `/${key}`).join(', ')})`, false);
      return this.note(lost === 0 ? `${name}: annotations added` : `${name}: ${lost} annotations removed`, lost === 0);
    }
    if (type === 'Pages' && nameIn(newDict, 'Type') === 'Pages' && this.appendsPages()) {
      if (keys.every((key) => key === 'Kids' || key === 'Count') && this.removed(oldDict!.get(KIDS), newDict!.get(KIDS)) === 0)
        return this.noteAppended(`page tree node ${ref} grew (${listed})`);
    }
    if (oldDict && newDict && this.isSignatureField(oldDict)) {
      const forbidden = keys.filter((key) => !SIGNATURE_WIDGET_MAY_CHANGE.has(key));
      const replaced = keys.includes('V') && oldDict.get(PDFName.of('V')) !== undefined;
      const name = `signature field ${ref}`;
      if (forbidden.length > 0) return this.note(`${name} changed (${forbidden.map((key) => `/${key}`).join(', ')})`, false);
      if (replaced) return this.note(`${name}: its signature was replaced`, false);
      return this.note(keys.includes('V') ? `${name} signed` : `appearance of ${name} changed`, true);
    }
    const formField = oldDict && newDict ? formFieldName(this.before, oldDict) : undefined;
    if (formField !== undefined) {
      const forbidden = keys.filter((key) => !FORM_FILL_MAY_CHANGE.has(key));
      if (forbidden.length === 0) return void this.filled.push(formField);
      return this.note(`form field ${formField} changed (${forbidden.map((key) => `/${key}`).join(', ')})`, false);
    }
    if (subtype === 'Widget') return this.note(`form field widget ${ref} changed (${listed})`, false);
    if (type === 'Annot' || (subtype && ANNOTATION_SUBTYPES.has(subtype)))
      return this.note(`annotation ${ref} (${subtype ?? 'Annot'}) changed`, true);
    const kind = type ?? subtype ?? (earlier instanceof PDFStream ? 'stream' : undefined);
    return this.note(`object ${ref}${kind ? ` (${kind})` : ''} changed${listed ? ` (${listed})` : ''}`, false);
  }

  /** How many entries of the earlier array (as it read before the update) the new one no longer has. */
  private removed(earlier: PDFObject | undefined, now: PDFObject | undefined): number {
    const before = this.before.lookup(earlier);
    const after = this.after.lookup(now);
    const keep = new Set(after instanceof PDFArray ? after.asArray().map((item) => item.toString()) : []);
    return before instanceof PDFArray ? before.asArray().filter((item) => !keep.has(item.toString())).length : 0;
  }

  /** A field of type /Sig (inherited through /Parent), or a widget of one. */
  private isSignatureField(dict: PDFDict): boolean {
    let node: PDFDict | undefined = dict;
    for (let depth = 0; node && depth < 32; depth++) {
      const type = nameIn(node, 'FT');
      if (type) return type === 'Sig';
      node = this.before.dict(node.get(PDFName.of('Parent')));
    }
    return false;
  }

  /** The pages' /Annots arrays (when indirect) before the update; the page tree is walked only when one may be. */
  private annotationLists(): Set<PDFRef> {
    if (!this.annots) {
      this.annots = new Set();
      for (const page of pageRefs(this.before, this.history.context.trailerInfo.Root)) {
        const list = this.before.dict(page)?.get(ANNOTS);
        if (list instanceof PDFRef) this.annots.add(list);
      }
    }
    return this.annots;
  }

  /** The roles objects had before the update: what the catalog, its form and its /DSS refer to. */
  private assignRoles(): void {
    const { trailerInfo } = this.history.context;
    const set = (value: PDFObject | undefined, role: Role) => {
      if (value instanceof PDFRef) this.roles.set(value, role);
    };
    set(trailerInfo.Root, 'catalog');
    set(trailerInfo.Info, 'info');
    const catalog = this.before.dict(trailerInfo.Root);
    set(catalog?.get(PDFName.of('Metadata')), 'metadata');
    const acroForm = catalog?.get(PDFName.of('AcroForm'));
    set(acroForm, 'acroform');
    set(this.before.dict(acroForm)?.get(FIELDS), 'fields');
    const dss = catalog?.get(PDFName.of('DSS'));
    set(dss, 'dss');
    const dssDict = this.before.dict(dss);
    for (const key of ['Certs', 'OCSPs', 'CRLs', 'VRI']) set(dssDict?.get(PDFName.of(key)), 'dss');
    const vri = this.before.dict(dssDict?.get(PDFName.of('VRI')));
    for (const [, entry] of vri?.entries() ?? []) set(entry, 'dss');

    const dssRef = this.after.dict(trailerInfo.Root)?.get(PDFName.of('DSS'));
    const dssAfter = this.after.dict(dssRef);
    if (dssRef instanceof PDFRef) this.validationData.set(dssRef, '/DSS');
    const vriRef = dssAfter?.get(PDFName.of('VRI'));
    if (vriRef instanceof PDFRef) this.validationData.set(vriRef, '/VRI');
    for (const [key, kind] of [
      ['Certs', 'certificate'],
      ['OCSPs', 'OCSP response'],
      ['CRLs', 'CRL'],
    ]) {
      const listRef = dssAfter?.get(PDFName.of(key));
      if (listRef instanceof PDFRef) this.validationData.set(listRef, `/${key}`);
      const list = this.after.lookup(listRef);
      for (const item of list instanceof PDFArray ? list.asArray() : []) {
        if (item instanceof PDFRef) this.validationData.set(item, kind);
      }
    }
  }

  /**
   * The update's own cross-reference section must list what it writes, and only point at the versions it wrote or
   * the current ones: a section that points an object back at an older version, or frees an object in use, changes
   * what readers show without writing anything new.
   */
  private checkCrossReferences(written: Set<PDFRef>): void {
    const section = crossReferenceSection(this.history.bytes, this.start, this.end);
    if (!section) {
      this.note('an update without a readable cross-reference section', false);
      return;
    }
    const listed = new Set<PDFRef>();
    for (const entry of section) {
      listed.add(entry.ref);
      if (entry.deleted) {
        const number = entry.ref.objectNumber;
        const generations = [0, entry.ref.generationNumber - 1, entry.ref.generationNumber];
        if (
          number > 0 &&
          generations.some((generation) => generation >= 0 && this.before.versionOf(PDFRef.of(number, generation)))
        )
          this.note(`object ${number} deleted`, false);
      } else if (
        !entry.inObjectStream &&
        // Object streams and cross-reference streams are containers pdf-lib does not keep: their objects are judged.
        this.history.versions.has(entry.ref) &&
        !this.pointsAtCurrentVersion(entry.ref, entry.offset)
      ) {
        this.note(`the cross-reference entry of object ${entry.ref} points to an earlier version (byte ${entry.offset})`, false);
      }
    }
    for (const ref of written) {
      if (!listed.has(ref)) this.note(`object ${ref} is written but not listed in the update's cross-reference section`, false);
    }
  }

  /** The object at `offset` is the last version of `ref` as of this update's end. */
  private pointsAtCurrentVersion(ref: PDFRef, offset: number): boolean {
    const head = this.history.bytes.toString('latin1', offset, Math.min(this.history.bytes.length, offset + 32));
    const match = /^\s*(\d+)\s+(\d+)\s+obj\b/.exec(head);
    if (!match || Number(match[1]) !== ref.objectNumber) return false;
    const list = this.history.versions.get(ref) ?? [];
    const current = this.after.versionOf(ref);
    // The first version ending after the offset is the one that starts there: it must be the current one.
    return !!current && list.find((version) => version.end > offset) === current;
  }
}

const FIELDS = PDFName.of('Fields');
const KIDS = PDFName.of('Kids');
const ANNOTS = PDFName.of('Annots');
const ANNOTATION_SUBTYPES = new Set([
  'Text',
  'Link',
  'FreeText',
  'Line',
  'Square',
  'Circle',
  'Polygon',
  'PolyLine',
  'Highlight',
  'Underline',
  'Squiggly',
  'StrikeOut',
  'Stamp',
  'Caret',
  'Ink',
  'Popup',
  'FileAttachment',
  'Sound',
  'Movie',
  'Widget',
  'Screen',
  'PrinterMark',
  'TrapNet',
  'Watermark',
  '3D',
  'Redact',
]);

function asDict(object: PDFObject | undefined): PDFDict | undefined {
  return object instanceof PDFDict ? object : object instanceof PDFStream ? object.dict : undefined;
}

function nameIn(dict: PDFDict | undefined, key: string): string | undefined {
  const value = dict?.get(PDFName.of(key));
  return value instanceof PDFName ? value.decodeText() : undefined;
}

/** The keys whose values differ (direct values compared as written; references by number). */
function changedKeys(earlier: PDFDict, now: PDFDict): string[] {
  const keys = new Set([...earlier.keys(), ...now.keys()].map((key) => key.decodeText()));
  return [...keys].filter((key) => earlier.get(PDFName.of(key))?.toString() !== now.get(PDFName.of(key))?.toString());
}

/** The same object written again: the same serialization, and for a stream the same bytes. */
function sameObject(earlier: PDFObject, now: PDFObject): boolean {
  if (earlier instanceof PDFRawStream && now instanceof PDFRawStream)
    return earlier.dict.toString() === now.dict.toString() && Buffer.from(earlier.contents).equals(Buffer.from(now.contents));
  if (earlier instanceof PDFStream || now instanceof PDFStream) return false;
  if (earlier instanceof PDFInvalidObject || now instanceof PDFInvalidObject) return false;
  return earlier.toString() === now.toString();
}
