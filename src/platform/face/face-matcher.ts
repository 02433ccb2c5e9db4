export { FaceMatchError, type FaceMatchRefusal } from './face-match-error';

export interface FaceComparison {
  /** 0-100 (one decimal), higher is more alike; compared with the signer's `face_match_threshold` (default 80). */
  matchScore: number;
  /** 0-100 (one decimal): a capture-quality gate on the live image, not anti-spoofing (see livenessScore). */
  livenessScore: number;
  /** Euclidean distance between the two 128-d face descriptors (face-api: same person usually below 0.45). */
  distance: number;
}

export interface FaceMatcher {
  /** Compares the one face in `live` with the one face in `reference` (JPEG or PNG bytes). */
  compare(reference: Uint8Array, live: Uint8Array): Promise<FaceComparison>;
  close(): Promise<void>;
}
