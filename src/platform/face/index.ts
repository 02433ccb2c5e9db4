import type { FaceMatcher } from './face-matcher';
import { LocalFaceMatcher } from './local-face-matcher';

export { FaceMatchError, type FaceComparison, type FaceMatcher, type FaceMatchRefusal } from './face-matcher';

/** The matcher the service uses: face-api on this machine. A hosted provider would be another implementation. */
export function createFaceMatcher(): FaceMatcher {
  return new LocalFaceMatcher();
}
