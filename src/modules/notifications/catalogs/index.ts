import type { Catalog, Language } from '../../../platform/i18n';
import bn from './bn.json';
import en from './en.json';
import gu from './gu.json';
import hi from './hi.json';
import kn from './kn.json';
import ml from './ml.json';
import mr from './mr.json';
import ta from './ta.json';
import te from './te.json';

/**
 * The signer's messages, one catalog per language (docs/translating.md): `meta` says who or what wrote it and how far
 * it was reviewed, `messages` holds ICU messages by key. English is the source; glossary.json holds the fixed terms.
 */
export const CATALOGS: Record<Language, Catalog> = { en, hi, bn, mr, te, ta, gu, kn, ml };

/** The English messages' shape: what a key may name. */
export type EnglishMessages = (typeof en)['messages'];
