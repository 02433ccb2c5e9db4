import { Entity, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

/**
 * A certificate the sandbox's DSC CA has revoked (POST /sandbox/dsc/revoke, or issued revoked): its OCSP responder
 * answers `revoked` for it and its CRL lists it, as a licensed CA's do, so that a DSC signer's revoked certificate can
 * be tried end to end.
 */
@Entity({ tableName: 'sandbox_revoked_certificates' })
export class SandboxRevokedCertificate {
  /** The certificate's serial number, lowercase hex without leading zeros. */
  @PrimaryKey({ type: 'string', length: 64 })
  serial!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  revokedAt: Opt<Date> = new Date();
}

/** A serial number as the table keys it: lowercase hex, no leading zeros, an even number of digits. */
export function serialKey(hex: string): string {
  const digits = hex.toLowerCase().replace(/^0+(?=.)/, '');
  return digits.length % 2 === 1 ? `0${digits}` : digits;
}
