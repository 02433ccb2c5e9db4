import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { LANGUAGES, type Language } from '../../platform/i18n';
import { Problems, isAbsent, oneOf } from '../../platform/validation/problems';
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
  const problems = new Problems();
  const value = typeof input.language === 'string' ? input.language.trim().toLowerCase() : input.language;
  if (isAbsent(value)) problems.missingField('language');
  const language = oneOf(problems, 'language', value, LANGUAGES);
  const refused = problems.toError();
  if (refused) throw refused;
  await em.transactional(async (tx) => {
    const signer = await tx.findOneOrFail(Signer, { id: found.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const previous: Language | null = signer.language ?? null;
    if (previous === language) return;
    // Present (else missing_fields) and one of LANGUAGES (else bad_request): refused above.
    signer.language = language!;
    recordAudit(tx, { session: signer.session, signer, event: 'language_chosen', origin, details: { language, previous } });
  });
}
