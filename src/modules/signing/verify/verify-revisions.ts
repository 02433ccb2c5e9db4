/**
 * The revisions of a PDF and what each one did: for each incremental update after the first signature, whether it
 * only added what signing may add (a signature, a document time-stamp, validation data in the /DSS, annotations
 * and the fields and widgets that hold signatures) or changed what the document shows.
 *
 * One parse of the file keeps every version of every object (pdf-history.ts): that gives, for each update, the
 * objects it writes and the version each replaces. No library judges PDF modifications in JavaScript (pyHanko's
 * difference analysis is Python, and iText's is Java and AGPL); the rules of judge-update.ts follow what a DocMDP
 * level 2 or 3 certification permits (ISO 32000-1 12.8.2.2) and the shadow attacks of Mainka et al. (2021): an
 * update may not point an object back at an older version, free an object in use, or write an object its own
 * cross-reference section does not list.
 */
import type { PDFRef } from 'pdf-lib';
import { pageRefs, StateAt, type PdfHistory } from './pdf-history';
import { UpdateJudge, type UpdateJudgement } from './judge-update';

export interface RevisionReport {
  /** 1 is the document the first signature covers (with every update before it); later ones count up. */
  number: number;
  /** Where the revision ends, in bytes from the start of the file. */
  end_bytes: number;
  /** The fields whose signature or document time-stamp this revision adds. */
  signatures: string[];
  /**
   * `original`: the document the first signature covers (or the whole file, unsigned); `signing_only`: it added
   * only what signing may add; `pages_appended`: besides that, it appended pages after the last one, changed no
   * earlier page, and a signature of its own covers them (a certificate of completion); `fields_filled`: besides
   * what signing may add, it filled form fields that its own signature locks (form-fills.ts); `content_changed`: it
   * changed what the document shows or how it reads.
   */
  verdict: 'original' | 'signing_only' | 'pages_appended' | 'fields_filled' | 'content_changed';
  /** What the update did, in plain words, signatures first; empty for the original. */
  changes: string[];
  /** The changes signing may not make (why the verdict is `content_changed`); empty otherwise. */
  content_changes: string[];
}

export interface SignedRevision {
  field: string;
  /** Where the revision the signature signs ends. */
  revisionEnd: number;
}

/**
 * Splits the file into revisions at each `%%EOF` after the first signed revision and judges each update; also
 * answers, for each signature, the changes after its revision.
 */
export class RevisionReader {
  private readonly boundaries: number[] = [];
  private readonly judged = new Map<number, JudgedUpdate>();
  private readonly pageNumbers: Map<PDFRef, number>;

  constructor(
    private readonly history: PdfHistory,
    private readonly fieldBySignature: Map<PDFRef, string>,
  ) {
    const { bytes } = history;
    for (let at = bytes.indexOf(EOF); at >= 0; at = bytes.indexOf(EOF, at + EOF.length)) {
      // A revision ends after `%%EOF` and its end of line.
      let end = at + EOF.length;
      if (bytes[end] === 0x0d) end++;
      if (bytes[end] === 0x0a) end++;
      this.boundaries.push(end);
    }
    const root = history.context.trailerInfo.Root;
    this.pageNumbers = new Map(pageRefs(new StateAt(history, bytes.length), root).map((ref, index) => [ref, index + 1]));
  }

  /** The revisions from the first signed one on; one `original` revision for a document without signatures. */
  revisions(signed: SignedRevision[]): RevisionReport[] {
    const length = this.history.bytes.length;
    const first = Math.min(...signed.map((signature) => signature.revisionEnd).filter((end) => end > 0 && end <= length));
    const originalEnd = Number.isFinite(first) ? first : length;
    const signaturesIn = (start: number, end: number) =>
      signed.filter((s) => s.revisionEnd > start && s.revisionEnd <= end).map((s) => s.field);
    const reports: RevisionReport[] = [
      {
        number: 1,
        end_bytes: originalEnd,
        signatures: signaturesIn(0, originalEnd),
        verdict: 'original',
        changes: [],
        content_changes: [],
      },
    ];
    for (const { start, end } of this.updatesAfter(originalEnd)) {
      const judged = this.judge(start, end);
      const signatures = signaturesIn(start, end);
      // Appended pages are no change to what earlier signers signed only when the update's own signature (not a
      // document time-stamp, which proves a time, not who added them) covers them.
      const appendedUnsigned =
        judged.appendedPages.length > 0 && (judged.signaturesAdded === 0 || signatures.length === 0)
          ? judged.appendedPages.map((change) => `${change} (no signature of the same update covers it)`)
          : [];
      const contentChanges = [...judged.contentChanges, ...appendedUnsigned];
      reports.push({
        number: reports.length + 1,
        end_bytes: end,
        signatures,
        verdict:
          contentChanges.length > 0
            ? 'content_changed'
            : judged.appendedPages.length > 0
              ? 'pages_appended'
              : judged.fieldsFilled.length > 0
                ? 'fields_filled'
                : 'signing_only',
        changes: judged.changes,
        content_changes: contentChanges,
      });
    }
    return reports;
  }

  /** Every change appended after a revision, in plain words, oldest update first. */
  changesAfter(revisionEnd: number): string[] {
    return this.updatesAfter(revisionEnd).flatMap(({ start, end }) => this.judge(start, end).changes);
  }

  private updatesAfter(revisionEnd: number): { start: number; end: number }[] {
    const updates: { start: number; end: number }[] = [];
    const { bytes } = this.history;
    let start = revisionEnd;
    for (const end of [...this.boundaries, bytes.length]) {
      if (end <= start) continue;
      // White space and NULs between revisions (the end of line after %%EOF) are no update; anything else is, a
      // tail after the last %%EOF included.
      if (/[^\s\0]/.test(bytes.toString('latin1', start, end))) updates.push({ start, end });
      start = end;
    }
    return updates;
  }

  /** Signatures share their later updates: each is judged once. */
  private judge(start: number, end: number): JudgedUpdate {
    let judged = this.judged.get(start);
    if (!judged || judged.end !== end) {
      if (end === this.history.bytes.length && !this.boundaries.includes(end)) {
        const tail = `${end - start} bytes appended after the last %%EOF (not a complete incremental update)`;
        judged = { end, changes: [tail], contentChanges: [tail], appendedPages: [], signaturesAdded: 0, fieldsFilled: [] };
      } else {
        judged = { end, ...new UpdateJudge(this.history, start, end, this.fieldBySignature, this.pageNumbers).judge() };
      }
      this.judged.set(start, judged);
    }
    return judged;
  }
}

interface JudgedUpdate extends UpdateJudgement {
  end: number;
}

const EOF = Buffer.from('%%EOF', 'latin1');
