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
  /** The envelope's document the element is on (its position); absent on the first (documentOf). */
  document?: number;
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

/** The position of the envelope's document an element is on. */
export const documentOf = (element: Pick<StoredElement, 'document'>): number => element.document ?? 0;
