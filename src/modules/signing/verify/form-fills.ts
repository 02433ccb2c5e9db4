/**
 * Form fields filled after the first signature, judged as FieldMDP says (ISO 32000-1 12.8.2.4): a field may be filled
 * in the update that adds the signature whose field's /Lock names it (the signer filled it and signed it in one
 * step), and never once a signature already made locks it. A change of anything but the value and its appearance
 * is no fill at all.
 */
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFString, type PDFObject } from 'pdf-lib';
import type { StateAt } from './pdf-history';

/** What filling a field changes: its value, and the appearance (and its state) of its widgets. */
export const FORM_FILL_MAY_CHANGE = new Set(['V', 'AP', 'AS']);

const decoded = (value: PDFObject | undefined) =>
  value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;

/**
 * The full name of the form field a dictionary is (or is a widget of), when its type, inherited through /Parent,
 * is a text, button or choice field; undefined for anything else (signature fields included).
 */
export function formFieldName(state: StateAt, dict: PDFDict): string | undefined {
  const names: string[] = [];
  let type: string | undefined;
  let node: PDFDict | undefined = dict;
  for (let depth = 0; node && depth < 32; depth++) {
    const own = node.get(PDFName.of('FT'));
    if (!type && own instanceof PDFName) type = own.decodeText();
    const title = decoded(state.lookup(node.get(PDFName.of('T'))));
    if (title !== undefined) names.unshift(title);
    node = state.dict(node.get(PDFName.of('Parent')));
  }
  return type === 'Tx' || type === 'Btn' || type === 'Ch' ? names.join('.') : undefined;
}

type Locks = Map<string, { signed: boolean; locks: Set<string> | 'all' }>;

/** The signature fields of the form as a state reads it: whether each is signed, and what its /Lock covers. */
function signatureLocks(state: StateAt, root: PDFObject | undefined): Locks {
  const found: Locks = new Map();
  const acroForm = state.dict(state.dict(root)?.get(PDFName.of('AcroForm')));
  const visit = (ref: PDFObject, prefix: string, depth: number) => {
    const field = state.dict(ref);
    if (!field || depth > 32) return;
    const title = decoded(state.lookup(field.get(PDFName.of('T'))));
    const name = title === undefined ? prefix : prefix ? `${prefix}.${title}` : title;
    const kids = state.lookup(field.get(PDFName.of('Kids')));
    if (kids instanceof PDFArray) for (const kid of kids.asArray()) visit(kid, name, depth + 1);
    if (state.lookup(field.get(PDFName.of('FT'))) !== PDFName.of('Sig')) return;
    const lock = state.dict(field.get(PDFName.of('Lock')));
    const action = state.lookup(lock?.get(PDFName.of('Action')));
    const listed = state.lookup(lock?.get(PDFName.of('Fields')));
    const locks =
      action === PDFName.of('All')
        ? 'all'
        : new Set((listed instanceof PDFArray ? listed.asArray() : []).map((item) => decoded(state.lookup(item)) ?? ''));
    found.set(name, { signed: field.get(PDFName.of('V')) !== undefined, locks: lock ? locks : new Set() });
  };
  const fields = state.lookup(acroForm?.get(PDFName.of('Fields')));
  for (const ref of fields instanceof PDFArray ? fields.asArray() : []) visit(ref, '', 0);
  return found;
}

const covers = (locks: Set<string> | 'all', name: string) => locks === 'all' || locks.has(name);

/**
 * Each filled field's verdict: allowed when a signature this update adds locks it (by the lock its field had before
 * this update, when it had one) and no signature made before does; otherwise why not.
 */
export function judgeFills(
  before: StateAt,
  after: StateAt,
  root: PDFObject | undefined,
  filled: Iterable<string>,
  signedNow: ReadonlySet<string>,
): { name: string; refusal: string | null }[] {
  const earlier = signatureLocks(before, root);
  const now = signatureLocks(after, root);
  return [...new Set(filled)].map((name) => {
    const lockedBefore = [...earlier].find(([, field]) => field.signed && covers(field.locks, name));
    if (lockedBefore)
      return { name, refusal: `form field ${name} changed after the signature of field ${lockedBefore[0]} locked it` };
    // A field prepared before keeps the lock it had then: signing may not widen it to take in someone else's field.
    const lockOf = (field: string) => earlier.get(field)?.locks ?? now.get(field)?.locks ?? new Set<string>();
    const lockingNow = [...signedNow].some((field) => covers(lockOf(field), name));
    return { name, refusal: lockingNow ? null : `form field ${name} filled without a signature of the same update locking it` };
  });
}
