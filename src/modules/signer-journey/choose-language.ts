import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { LANGUAGES, isLanguage, type Language } from '../../platform/i18n';
import { recordAudit, type RequestOrigin } from '../audit';
import { Signer, signerByToken } from '../esign/signer-side';

/**
 * The signer chooses the language they read in, on the page (or the host that frames it does): kept on the signer,
 * so the page opens in it next time and every message still to come (a code, the completion notice) is written in it.
 * The audit trail records each change: which language's consent text the signer was shown is evidence too.
 */
export async function chooseSignerLanguage(
  em: EntityManager,
  token: string | null,
  input: { language?: unknown },
  origin: RequestOrigin,
): Promise<void> {
  const found = await signerByToken(em, token);
  const language = typeof input.language === 'string' ? input.language.trim().toLowerCase() : input.language;
  if (language === undefined || language === null || language === '') throw AppError.missingFields(['language']);
  if (!isLanguage(language)) {
    throw AppError.badRequest([{ field: 'language', problem: `must be one of ${LANGUAGES.join(', ')}` }]);
  }
  await em.transactional(async (tx) => {
    const signer = await tx.findOneOrFail(Signer, { id: found.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const previous: Language | null = signer.language ?? null;
    if (previous === language) return;
    signer.language = language;
    recordAudit(tx, { session: signer.session, signer, event: 'language_chosen', origin, details: { language, previous } });
  });
}
