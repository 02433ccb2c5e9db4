import { LANGUAGE_INFO, createTranslator, languageOrFallback, type Language } from '../../../platform/i18n';
import type { Signer } from '../esign-session.entity';
import { signerFieldValues } from '../elements/field-values';
import { CERTIFICATE_CATALOGS } from './catalogs';
import type { SignerPartInLanguage } from './render-completion-certificate';

const translator = createTranslator(CERTIFICATE_CATALOGS);

/**
 * A signer's part of the certificate of completion in the signer's language, drawn under the English rows (which
 * stay: the owner, a court and any reader have them whatever the signer reads): the statement of how and when they
 * signed, and their rows (method, time, contact, checks, fields) with labels and fixed words translated; data (names,
 * addresses, values) as given. None for a signer who reads English, or has no language set.
 */
export function signerPartInLanguage(
  signer: Signer,
  signedAt: Date | null,
  /** The mobile number as the English rows write it. */
  mobile: string | null,
): SignerPartInLanguage | null {
  const language: Language = languageOrFallback(signer.language);
  if (language === 'en') return null;
  const t = (key: string, values: Record<string, string | number | Date> = {}) =>
    translator.t(language, `certificate.${key}`, values);
  const method = t(`methods.${signer.signType}`);
  const label = (key: string) => t(`labels.${key}`);
  const rows: [string, string][] = [
    [label('signed_with'), method],
    [label('signed_at'), signedAt ? t('values.at', { at: signedAt }) : '-'],
    [label('email'), signer.email ?? '-'],
    [label('mobile'), mobile ?? '-'],
    [label('location'), signer.location ? t('checks.location', { source: signer.location.source }) : t('values.not_checked')],
  ];
  const checks = checksOf(signer).map(([key, values]) => t(`checks.${key}`, values));
  rows.push([label('checks'), checks.length > 0 ? checks.join('; ') : t('values.none_requested')]);
  signerFieldValues(signer).forEach((field, index) => {
    rows.push([index === 0 ? label('fields') : '', `${field.label ?? field.type}: ${field.shown ?? t('values.empty')}`]);
  });
  return {
    heading: t('heading', { name: signer.fullName, language: LANGUAGE_INFO[language].native }),
    statement: signedAt ? t('statement', { name: signer.fullName, signed: signedAt, method }) : null,
    note: t('english_prevails'),
    rows,
  };
}

/** The checks the signer passed, as the English rows list them: each a message key and its values. */
function checksOf(signer: Signer): [string, Record<string, string | Date>][] {
  const checks: [string, Record<string, string | Date>][] = [];
  if (signer.emailVerifiedAt) checks.push(['email', { at: signer.emailVerifiedAt }]);
  if (signer.mobileVerifiedAt) checks.push(['mobile', { at: signer.mobileVerifiedAt }]);
  if (signer.nameMatch.status === 'completed' && signer.nameMatch.score !== null)
    checks.push(['name_match', { score: String(signer.nameMatch.score) }]);
  if (signer.faceMatch.match_score !== null) checks.push(['face_match', { score: String(signer.faceMatch.match_score) }]);
  if (signer.signType === 'aadhaar' && signer.aadhaarCertDetails) checks.push(['aadhaar', {}]);
  if (signer.signType === 'dsc') checks.push(['dsc', {}]);
  return checks;
}
