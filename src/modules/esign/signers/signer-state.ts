/** The signer's stored state that is not a column of its own (JSON columns), and its statuses. */

export type SignerStatus = 'pending' | 'completed' | 'failed' | 'declined';

export type { StoredElement } from '../elements/stored-element';

export interface NameMatchState {
  enforce: boolean;
  prefill_name: string | null;
  signer_name: string | null;
  score: number | null;
  /**
   * `pending` until an Aadhaar (or DSC) signature is recorded; then `completed` (scored against the certificate's CN) or
   * `unavailable` (the certificate has no single CN to score); `skipped` when not requested.
   */
  status: 'pending' | 'completed' | 'skipped' | 'unavailable';
}

/**
 * Which DSC a `dsc` signer must sign with (`dsc_certificate` of the signer input): every rule given must hold. `pan`
 * is matched against the subject's serialNumber (2.5.4.5), which the CCA's interoperability guidelines fill with the
 * SHA-256 of the PAN (or the PAN itself, on older certificates); `serial` is the certificate's own serial number (hex).
 */
export interface DscRule {
  pan: string | null;
  organisation: string | null;
  serial: string | null;
}

export interface FaceMatchState {
  enforce: boolean;
  ref_file_id: string | null;
  live_file_id: string | null;
  match_threshold: number | null;
  max_attempts: number | null;
  liveness_score: number | null;
  match_score: number | null;
}

/** Where the signer was when the location check passed; `distance_m` from the geofence centre when enforced. */
export interface SignerLocation {
  source: 'device' | 'ip';
  latitude: number | null;
  longitude: number | null;
  accuracy_m: number | null;
  ip: string | null;
  distance_m: number | null;
  recorded_at: string;
}

export interface NotificationFlags {
  invite: boolean;
  completion: boolean;
  whatsapp: boolean;
}
