import type { Signer } from '../esign-session.entity';
import { kindOf } from './registry';
import { imageFieldPath } from './fill-values';
import { documentOf } from './stored-element';
import { currentPageOf, type StampPlacement } from '../documents';

/**
 * The fields a signer sees on the signing page: every form field of theirs, with its control (`input`, absent when
 * the service fills it), its rules, the value (the owner's prefill or what they filled), and its box on the pages of
 * its document's current PDF (stamp pages first in the stamped one).
 */
export function signerForm(signer: Signer, stamps: StampPlacement) {
  return signer.elements
    .filter((element) => kindOf(element).widget !== undefined)
    .map((element) => {
      const kind = kindOf(element);
      return {
        field_id: element.field_id,
        type: element.type,
        input: kind.input ?? null,
        label: element.label ?? null,
        required: element.required ?? false,
        read_only: element.read_only ?? false,
        value: element.value,
        suggestion:
          element.value === null ? (kind.suggest?.({ fullName: signer.fullName, email: signer.email ?? null }) ?? null) : null,
        filled_at: element.filled_at ?? null,
        format: element.format,
        min_length: element.min_length ?? null,
        max_length: element.max_length ?? null,
        pattern: element.pattern ?? null,
        min: element.min ?? null,
        max: element.max ?? null,
        options: element.options ?? null,
        multiline: element.multiline ?? false,
        every_page: element.every_page ?? false,
        upload_path: kind.assetValue ? imageFieldPath(element.field_id) : null,
        document: documentOf(element),
        page: currentPageOf(element, stamps),
        x: element.x,
        y: element.y,
        width: element.width,
        height: element.height,
      };
    });
}
