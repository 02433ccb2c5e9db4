import type { FormFieldLayout, FormFill } from '../../signing';
import type { StoredElement } from './stored-element';
import { kindOf } from './registry';

/**
 * What the PDF is made of, from the elements: the boxes of each signer's signature, the owner's images drawn on the
 * page, and the form fields signers fill, with the values each signer's own signature update writes. Pages in the
 * answers are pages of the working PDF: stamp pages come first, so `shift` is their count.
 */

export interface PlacedBox {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

const boxOf = (element: StoredElement, shift: number, page = element.page): PlacedBox => ({
  page: page + shift,
  x: element.x,
  y: element.y,
  width: element.width,
  height: element.height,
});

/** Where the signer's signature appearance goes. */
export const signatureElements = (elements: StoredElement[]) =>
  elements.filter((element) => kindOf(element).source === 'signature');

/** An owner's image: drawn into the page's content before the first signature (no form field holds it). */
export const drawsOnPage = (element: StoredElement) => kindOf(element).source === 'owner' && !kindOf(element).widget;

/** The owner's images to draw. */
export const pageImageElements = (elements: StoredElement[]) =>
  elements.filter((element) => drawsOnPage(element) && element.value);

/**
 * The boxes of a field's widgets: one per page of the uploaded document for initials on every page; one row per
 * option, top to bottom, for a radio group; else the element's own box.
 */
function widgetBoxes(element: StoredElement, shift: number, uploadedPages: number): PlacedBox[] {
  if (element.every_page) return Array.from({ length: uploadedPages }, (_, page) => boxOf(element, shift, page));
  const kind = kindOf(element);
  if (kind.widget === 'radio' && element.options?.length) {
    const rowHeight = element.height / element.options.length;
    return element.options.map((_, row) => ({ ...boxOf(element, shift), y: element.y + row * rowHeight, height: rowHeight }));
  }
  return [boxOf(element, shift)];
}

/** The text a field shows for its value: `drawn` by its kind (a date in its format...), or the value as kept. */
export function shownValue(element: StoredElement, signedAt: Date): string | null {
  if (element.value === null) return null;
  return kindOf(element).drawn(element, element.value, { signedAt });
}

/**
 * The form fields of every signer, made empty in the prepare update, or showing the owner's prefill (an image
 * field's prefill is its asset, looked up in `assets`).
 */
export function formFieldLayouts(
  elements: StoredElement[],
  shift: number,
  uploadedPages: number,
  assets: ReadonlyMap<string, NonNullable<FormFieldLayout['image']>>,
): FormFieldLayout[] {
  return elements.flatMap((element): FormFieldLayout[] => {
    const kind = kindOf(element);
    if (!kind.widget) return [];
    const asset = kind.assetOf(element);
    return [
      {
        name: element.field_id,
        kind: kind.widget,
        boxes: widgetBoxes(element, shift, uploadedPages),
        options: element.options ?? undefined,
        multiline: element.multiline === true,
        fontSize: element.font_size,
        alignment: element.alignment as FormFieldLayout['alignment'],
        label: element.label ?? undefined,
        // The owner's prefill shows from the start (a service-filled value has none yet).
        value: kind.assetValue ? null : shownValue(element, new Date()),
        image: asset ? (assets.get(asset) ?? null) : null,
      },
    ];
  });
}

/**
 * The values a signer's own signature update writes: what they filled on the page (and the service for them,
 * date_signed), each as its kind draws it. An owner's prefill the signer left alone was drawn when the document was
 * prepared; the signature's lock covers it all the same.
 */
export function signerFills(
  elements: StoredElement[],
  signedAt: Date,
  assets: ReadonlyMap<string, NonNullable<FormFill['image']>>,
): FormFill[] {
  return elements.flatMap((element): FormFill[] => {
    const kind = kindOf(element);
    if (!kind.widget) return [];
    const value = kind.source === 'service' ? '' : element.value;
    if (kind.source !== 'service' && (!element.filled_at || value === null)) return [];
    const asset = kind.assetOf(element);
    if (asset) return assets.has(asset) ? [{ name: element.field_id, value: asset, image: assets.get(asset)! }] : [];
    return [{ name: element.field_id, value: kind.drawn(element, value ?? '', { signedAt }) }];
  });
}

/** The names of the fields a signer's signature locks (FieldMDP): every field of theirs. */
export const lockedFieldNames = (elements: StoredElement[]) =>
  elements.filter((element) => kindOf(element).widget !== undefined).map((element) => element.field_id);

/** The uploaded images the elements show (image and seal assets, wet signatures). */
export const assetIdsOf = (elements: StoredElement[]) => [
  ...new Set(elements.flatMap((element) => kindOf(element).assetOf(element) ?? [])),
];
