import { newId } from '../../../platform/ids';
import { isAbsent, oneOf, text, type Problems } from '../../../platform/validation/problems';
import type { StoredElement } from './stored-element';
import type { ElementRuleInput, ElementRules } from './element-kind';
import { ELEMENT_TYPES, kindOf } from './registry';
import { VALUE_MAX_CHARACTERS } from './text-rules';
import { valueProblem } from './values';

export const ALIGNMENTS = ['left', 'center', 'right'] as const;
export const ELEMENTS_PER_SIGNER = 50;
const LABEL_MAX_CHARACTERS = 200;
/** When an element gives no font size (points). */
export const DEFAULT_FONT_SIZE = 10;

/** An element as a request describes it (ElementInput in both faces). */
export interface PlannedElementInput extends ElementRuleInput {
  field_id?: string;
  x?: number | null;
  y?: number | null;
  page?: number | null;
  /** The envelope's document (zero-based position); absent: the first. */
  document?: number | null;
  type?: string | null;
  alignment?: string | null;
  width?: number | null;
  height?: number | null;
  allow_wet_signature?: boolean | null;
  font_size?: number | null;
  format?: string | null;
  value?: string | null;
}

export interface PlanOptions {
  /** Values the element needs now: an image's asset, a read-only field's value (templates take them at runtime). */
  requireValues: boolean;
}

/** One element checked (problems named under `field`, e.g. `signers[1].elements[3]`) and shaped as stored. */
export function planElement(
  problems: Problems,
  field: string,
  input: PlannedElementInput,
  options: PlanOptions,
): StoredElement | undefined {
  const before = problems.missing.length + problems.invalid.length;
  for (const key of ['x', 'y', 'page', 'type', 'alignment'] as const) {
    if (isAbsent(input[key])) problems.missingField(`${field}.${key}`);
  }
  const type = oneOf(problems, `${field}.type`, input.type, ELEMENT_TYPES);
  const alignment = oneOf(problems, `${field}.alignment`, input.alignment, ALIGNMENTS);
  checkPlacement(problems, field, input);
  const format = text(problems, `${field}.format`, input.format, 100) ?? null;
  const value = text(problems, `${field}.value`, input.value, VALUE_MAX_CHARACTERS) ?? null;
  if (!type) return undefined;
  const kind = kindOf({ type });
  if (format !== null && kind.formats && !kind.formats.includes(format))
    problems.invalidField(`${field}.format`, `must be one of ${kind.formats.join(', ')}`);
  const rules = kind.widget ? planRules(problems, field, input, kind.type) : {};
  const element: StoredElement = {
    // Elements merged from a template keep the template's field ids.
    field_id: input.field_id ?? newId('field'),
    type,
    x: input.x!,
    y: input.y!,
    page: input.page!,
    alignment: alignment ?? 'left',
    width: input.width ?? kind.size.width,
    height: input.height ?? kind.size.height,
    allow_wet_signature: input.allow_wet_signature ?? false,
    font_size: input.font_size ?? DEFAULT_FONT_SIZE,
    format,
    value,
    // Kept only off the first document, so a one-document session's elements stay as they always were.
    ...(input.document ? { document: input.document } : {}),
    ...rules,
  };
  checkPlannedValue(problems, field, element, options);
  if (problems.missing.length + problems.invalid.length > before || !alignment) return undefined;
  return element;
}

function checkPlacement(problems: Problems, field: string, input: PlannedElementInput): void {
  for (const key of ['x', 'y'] as const) {
    const value = input[key];
    if (!isAbsent(value) && !(Number.isFinite(value) && value! >= 0 && value! <= 14_400)) {
      problems.invalidField(`${field}.${key}`, 'must be a number of PDF points from 0 to 14400');
    }
  }
  if (!isAbsent(input.page) && !(Number.isInteger(input.page) && input.page! >= 0)) {
    problems.invalidField(`${field}.page`, 'must be a zero-based page index');
  }
  // Whether the document exists is the planner's to say: it knows the envelope.
  if (!isAbsent(input.document) && !(Number.isInteger(input.document) && input.document! >= 0)) {
    problems.invalidField(`${field}.document`, 'must be a zero-based index into documents');
  }
  for (const key of ['width', 'height', 'font_size'] as const) {
    const value = input[key];
    if (!isAbsent(value) && !(Number.isFinite(value) && value! > 0 && value! <= 14_400)) {
      problems.invalidField(`${field}.${key}`, 'must be a number greater than 0');
    }
  }
}

/** The rules every element with a value to fill has (required, read_only, label), then its kind's own. */
function planRules(problems: Problems, field: string, input: PlannedElementInput, type: string): Partial<ElementRules> {
  const kind = kindOf({ type });
  const serviceFilled = kind.source === 'service';
  for (const key of ['required', 'read_only', 'multiline', 'every_page'] as const) {
    if (!isAbsent(input[key]) && typeof input[key] !== 'boolean')
      problems.invalidField(`${field}.${key}`, 'must be true or false');
  }
  return {
    // A ticked box is not demanded unless asked; every other field must be filled unless it says otherwise.
    required: serviceFilled || (input.required ?? type !== 'checkbox'),
    read_only: serviceFilled || input.read_only === true,
    label: text(problems, `${field}.label`, input.label, LABEL_MAX_CHARACTERS) ?? null,
    ...kind.planRules(problems, field, input),
  };
}

/** A value given at planning keeps its kind's rules; a read-only field (and an image) needs one unless a template fills it later. */
function checkPlannedValue(problems: Problems, field: string, element: StoredElement, options: PlanOptions): void {
  const kind = kindOf(element);
  if (kind.source === 'service') {
    if (element.value !== null)
      problems.invalidField(`${field}.value`, `a ${kind.type} element is filled by the service when its signer signs`);
    return;
  }
  const needsValue = kind.type === 'image' || element.read_only === true;
  if (element.value === null) {
    if (options.requireValues && needsValue) problems.missingField(`${field}.value`);
    return;
  }
  // Assets are checked against the owner's files by the planner that looks them up.
  if (kind.widget && !kind.assetValue) {
    const problem = valueProblem(element, element.value);
    if (problem) problems.invalidField(`${field}.value`, problem);
  }
}

/**
 * A signer's elements. A signer with elements needs a `signature` among them (somewhere to draw it);
 * `requireSignature` makes one mandatory even when there are no elements (templates).
 */
export function planElements(
  problems: Problems,
  field: string,
  input: PlannedElementInput[] | null | undefined,
  options: PlanOptions & { requireSignature: boolean },
): StoredElement[] {
  const elements = input ?? [];
  if (elements.length > ELEMENTS_PER_SIGNER)
    problems.invalidField(`${field}.elements`, `at most ${ELEMENTS_PER_SIGNER} elements`);
  const planned = elements.map((element, index) => planElement(problems, `${field}.elements[${index}]`, element, options));
  if ((elements.length > 0 || options.requireSignature) && !elements.some((element) => element.type === 'signature')) {
    problems.invalidField(`${field}.elements`, 'at least one element of type signature is needed to place the signature');
  }
  const ids = planned.flatMap((element) => (element ? [element.field_id] : []));
  if (new Set(ids).size !== ids.length) problems.invalidField(`${field}.elements`, 'field_id values must differ');
  return planned.filter((element): element is StoredElement => element !== undefined);
}
