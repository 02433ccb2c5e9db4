import { defineKind } from './element-kind';

/**
 * Where the signer's signature appearance goes (the signature field's widgets). A value naming an uploaded image is a
 * wet signature shown inside the appearance (kept only with `allow_wet_signature` when it comes from a template).
 */
export const signature = defineKind({
  type: 'signature',
  size: { width: 160, height: 50 },
  source: 'signature',
  assetOf: (element) => (element.value?.startsWith('file_') ? element.value : null),
});
