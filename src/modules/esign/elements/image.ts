import { defineKind } from './element-kind';

/** An owner's uploaded image (an asset), drawn on the page before the first signature. */
export const image = defineKind({ type: 'image', size: { width: 100, height: 100 }, source: 'owner', assetValue: true });
