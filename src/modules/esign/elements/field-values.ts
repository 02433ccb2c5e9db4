import type { StoredElement } from './stored-element';
import { kindOf } from './registry';
import { shownValue } from './pdf-layout';

/** Who gave a field's value: its signer, the service (date_signed), or the owner's prefill no one changed. */
export type FilledBy = 'signer' | 'service' | 'owner';

/** One field's value as the owner reads it (field-values route, webhook `esign.signer.signed`, certificate). */
export interface FieldValue {
  field_id: string;
  signer_id: string;
  signer_position: number;
  type: string;
  label: string | null;
  /** As kept: a date as entered, a checkbox as `true`/`false`, date_signed as the ISO signing time. */
  value: string | null;
  /** The text the value is drawn as in the PDF (a date in its format, date_signed in IST); null without a value. */
  shown: string | null;
  filled_at: string | null;
  filled_by: FilledBy | null;
}

/** Every field (an element with a form widget) of one signer, in element order; signatures and images are not. */
export function signerFieldValues(signer: {
  id: string;
  position: number;
  elements: StoredElement[];
  completedAt?: Date | null;
}): FieldValue[] {
  return signer.elements
    .filter((element) => kindOf(element).widget !== undefined)
    .map((element) => {
      const source = kindOf(element).source;
      const hasValue = element.value !== null && element.value !== '';
      const filledAt = element.filled_at ?? null;
      return {
        field_id: element.field_id,
        signer_id: signer.id,
        signer_position: signer.position,
        type: element.type,
        label: element.label ?? null,
        value: element.value,
        // A service value is the signing time itself; any other kind's drawing does not read the time.
        shown: hasValue
          ? shownValue(element, source === 'service' ? new Date(element.value!) : (signer.completedAt ?? new Date()))
          : null,
        filled_at: filledAt,
        filled_by: !hasValue ? null : source === 'service' ? 'service' : filledAt ? 'signer' : 'owner',
      };
    });
}
