import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'user'
  | 'tok'
  | 'file'
  | 'esign'
  | 'doc'
  | 'signer'
  | 'template'
  | 'field'
  | 'stamp'
  | 'stamp_inst'
  | 'pfx'
  | 'dlink'
  | 'wle'
  | 'otp'
  | 'ntf'
  | 'aud'
  | 'whk'
  | 'evt'
  | 'whd'
  | 'wha'
  | 'bulk';

/** Public identifiers: a kind prefix and 128 random bits, so they can be neither guessed nor enumerated. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

export function hasPrefix(id: unknown, prefix: IdPrefix): id is string {
  return typeof id === 'string' && id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
