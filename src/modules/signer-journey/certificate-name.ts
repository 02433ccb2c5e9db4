import type { Signer } from '../esign/signer-side';
import { nameMatchScore } from '../signing';

/**
 * The name a signer's certificate gives its holder (an Aadhaar ESP's, a DSC's CN) kept in their name match, scored
 * against the name expected; with no name to score, the match is `unavailable`. Only when the match is enforced.
 */
export function recordCertificateName(signer: Signer, name: string | null): void {
  if (!signer.nameMatch.enforce) return;
  signer.nameMatch = name
    ? {
        ...signer.nameMatch,
        signer_name: name,
        score: nameMatchScore(name, signer.nameMatch.prefill_name ?? signer.fullName),
        status: 'completed',
      }
    : { ...signer.nameMatch, signer_name: null, score: null, status: 'unavailable' };
}
