import type { StoredElement } from './stored-element';
import { kindOf } from './registry';

/**
 * Why a value breaks its element's rules, the same for an owner's prefill, a template's element_values and what a
 * signer submits (the page checks the same rules first). Null: the value is kept.
 */
export function valueProblem(element: StoredElement, value: string): string | null {
  if (value.trim() === '') return element.required ? 'required' : null;
  return kindOf(element).valueProblem(element, value);
}

/** The elements of a signer that the signer fills on the page (their kind has a control and they are not read-only). */
export const signerFilled = (elements: StoredElement[]) =>
  elements.filter((element) => kindOf(element).input !== undefined && !element.read_only);

/** Elements whose value shows in the PDF as a form field: everything but the signature's own field and owner images. */
export const formElements = (elements: StoredElement[]) => elements.filter((element) => kindOf(element).widget !== undefined);

/** The uploaded image an element shows (an image's or seal's asset, a wet signature), if any. */
export const assetOf = (element: StoredElement) => kindOf(element).assetOf(element);
