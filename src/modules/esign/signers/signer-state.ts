/** The signer's stored state that is not a column of its own (JSON columns), and its statuses. */

export type SignerStatus = 'pending' | 'completed' | 'failed' | 'declined';

/**
 * A placed item, as stored: pages refer to the uploaded PDF (zero-based), units are PDF points. `type` names its kind
 * (esign/elements/registry.ts). The contract's keys come first and are always there; the rules after them are kept
 * only by kinds with a value to fill (never by `signature` and `image`, whose answers stay as the contract shows).
 */
export interface StoredElement {
  field_id: string;
  type: string;
  x: number;
  y: number;
  page: number;
  alignment: string;
  width: number;
  height: number;
  allow_wet_signature: boolean;
  font_size: number;
  format: string | null;
  /** The owner's prefill, then what the signer filled (or the service, for date_signed). */
  value: string | null;
  required?: boolean;
  read_only?: boolean;
  label?: string | null;
  min_length?: number | null;
  max_length?: number | null;
  pattern?: string | null;
  min?: number | null;
  max?: number | null;
  options?: string[] | null;
  multiline?: boolean;
  every_page?: boolean;
  /** When the signer (or the service) filled the value; null while only the owner's prefill is there. */
  filled_at?: string | null;
}

export interface NameMatchState {
  enforce: boolean;
  prefill_name: string | null;
  signer_name: string | null;
  score: number | null;
  /**
   * `pending` until an Aadhaar signature is recorded; then `completed` (scored against the certificate's CN) or
   * `unavailable` (the certificate has no single CN to score); `skipped` when not requested.
   */
  status: 'pending' | 'completed' | 'skipped' | 'unavailable';
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
