import { defineKind } from './element-kind';

/**
 * A company seal the signer applies: an image (JPEG or PNG) the signer uploads on the page, or the owner's asset
 * given as `value`; drawn in the signer's own signature update.
 */
export const seal = defineKind({
  type: 'seal',
  size: { width: 90, height: 90 },
  source: 'signer',
  widget: 'image',
  input: 'image',
  assetValue: true,
  valueProblem: (_element, value) => (value.startsWith('file_') ? null : 'must be the client_id of an uploaded image'),
});
