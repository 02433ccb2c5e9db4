import type { FormWidgetKind } from '../../signing';
import type { Problems } from '../../../platform/validation/problems';
import type { StoredElement } from './stored-element';

/**
 * What one kind of element is, declared once (one file per kind in this folder, gathered in registry.ts): its input
 * rules, what is stored, who gives its value and what the signer enters, and how it is drawn into the PDF.
 */

/** Who gives the value: the signature itself, the owner (an asset at planning), the signer on the page, the service. */
export type ValueSource = 'signature' | 'owner' | 'signer' | 'service';

/** The AcroForm field a filled element becomes. */
export type WidgetKind = FormWidgetKind;

/** The control the signing page shows for it (page/assets/fields/<input>.js draws it). */
export type SignerInput = 'text' | 'textarea' | 'number' | 'date' | 'checkbox' | 'radio' | 'select' | 'email' | 'image';

/** The request shape of an element's own rules (all optional; each kind reads the ones it has). */
export interface ElementRuleInput {
  required?: boolean | null;
  read_only?: boolean | null;
  label?: string | null;
  min_length?: number | null;
  max_length?: number | null;
  pattern?: string | null;
  min?: number | null;
  max?: number | null;
  options?: string[] | null;
  multiline?: boolean | null;
  every_page?: boolean | null;
}

/** The stored rules of a filled element: the keys a kind with a value to fill keeps (never on signature or image). */
export type ElementRules = Pick<
  StoredElement,
  | 'required'
  | 'read_only'
  | 'label'
  | 'min_length'
  | 'max_length'
  | 'pattern'
  | 'min'
  | 'max'
  | 'options'
  | 'multiline'
  | 'every_page'
>;

/** What a drawn value may depend on besides the element: the signing time (date_signed). */
export interface DrawContext {
  signedAt: Date;
}

export interface ElementKind {
  readonly type: string;
  /** The box when the element gives no width or height (PDF points). */
  readonly size: { width: number; height: number };
  readonly source: ValueSource;
  /** The form field it becomes; none for `signature` (the signature's own field) and `image` (drawn on the page). */
  readonly widget?: WidgetKind;
  /** The control the signing page shows; none when the signer enters nothing. */
  readonly input?: SignerInput;
  /** The value is the client_id of an uploaded image (an asset). */
  readonly assetValue: boolean;
  /** The contract's `format` means something for this kind (and is checked); elsewhere it is stored as given. */
  readonly formats?: readonly string[];
  /** The kind's own rules at planning: problems named under `field`; the answer is what is stored. */
  planRules(problems: Problems, field: string, input: ElementRuleInput): Partial<ElementRules>;
  /** Why `value` breaks the element's rules (null: it keeps them). Emptiness and `required` are the registry's. */
  valueProblem(element: StoredElement, value: string): string | null;
  /** The text drawn for a kept value (a date in the element's format, a number as given...). */
  drawn(element: StoredElement, value: string, context: DrawContext): string;
  /** What the signing page offers when the field has no value yet (the invite's name, email, initials). */
  suggest?(person: { fullName: string; email: string | null }): string | null;
  /** The uploaded image the element shows, if any: an asset value, a signature's wet-signature image. */
  assetOf(element: StoredElement): string | null;
}

/** A kind with the defaults most kinds share: no rules of its own, any value, drawn as given. */
export function defineKind(kind: Partial<ElementKind> & Pick<ElementKind, 'type' | 'size' | 'source'>): ElementKind {
  return {
    assetValue: false,
    planRules: () => ({}),
    valueProblem: () => null,
    drawn: (_element, value) => value,
    assetOf: (element) => (kind.assetValue ? element.value : null),
    ...kind,
  };
}

/** A whole number within [min, max], else a problem under `field`. */
export function boundedWhole(
  problems: Problems,
  field: string,
  value: number | null | undefined,
  range: { min: number; max: number },
): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    problems.invalidField(field, `must be a whole number from ${range.min} to ${range.max}`);
    return null;
  }
  return value;
}

/** Characters as a reader counts them (code points), not UTF-16 units. */
export const characterCount = (value: string) => [...value].length;
