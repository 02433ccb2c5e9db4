import type { Catalog, Language } from '../../../../platform/i18n';
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
 * The signer’s part of the certificate of completion, one catalog per language (docs/translating.md): the same format as the messages’
 * catalogs (src/modules/notifications/catalogs), and the same glossary of fixed terms.
 */
export const CERTIFICATE_CATALOGS: Record<Language, Catalog> = { en, hi, bn, mr, te, ta, gu, kn, ml };
