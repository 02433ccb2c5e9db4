import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import type { AadhaarCertDetails } from '../signing/certificates';
import { EsignSession, type SignType } from './esign-session.entity';

export type SignerStatus = 'pending' | 'completed' | 'failed';

/** A placed item, as stored: pages refer to the uploaded PDF (zero-based), units are PDF points. */
export interface StoredElement {
  field_id: string;
  type: 'signature' | 'image';
  x: number;
  y: number;
  page: number;
  alignment: string;
  width: number;
  height: number;
  allow_wet_signature: boolean;
  font_size: number;
  format: string | null;
  value: string | null;
}

export interface NameMatchState {
  enforce: boolean;
  prefill_name: string | null;
  signer_name: string | null;
  score: number | null;
  status: 'pending' | 'completed' | 'skipped';
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

/**
 * One signer of a session. The signer token is a credential: only its SHA-256 (for look-up) and a sealed
 * copy (so the owner's reads can show it, as the contract wants) are stored.
 */
@Entity({ tableName: 'esign_signers' })
@Index({ properties: ['session', 'position'] })
export class Signer {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('signer');

  @ManyToOne(() => EsignSession, { deleteRule: 'cascade' })
  session!: EsignSession;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'text' })
  tokenSealed!: string;

  @Property({ type: 'string', length: 16 })
  signType!: SignType;

  @Property({ type: 'integer' })
  authMode!: number;

  @Property({ type: 'integer' })
  maxRetry!: number;

  @Property({ type: 'string', length: 64, nullable: true })
  pfxId?: string;

  @Property({ type: 'string', length: 200 })
  fullName!: string;

  @Property({ type: 'string', length: 320, nullable: true })
  email?: string;

  @Property({ type: 'string', length: 8, nullable: true })
  countryCode?: string;

  @Property({ type: 'string', length: 20, nullable: true })
  mobile?: string;

  @Property({ type: 'boolean' })
  verifyEmail!: boolean;

  @Property({ type: 'boolean' })
  verifyMobile!: boolean;

  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string;

  @Property({ type: 'boolean' })
  acceptVirtualSign!: boolean;

  @Property({ type: 'boolean' })
  verifyLocation!: boolean;

  @Property({ type: 'string', length: 8, nullable: true })
  locationSource?: 'device' | 'ip';

  @Property({ type: 'boolean' })
  enforceGeofence!: boolean;

  @Property({ type: 'double', nullable: true })
  latitude?: number;

  @Property({ type: 'double', nullable: true })
  longitude?: number;

  @Property({ type: 'double', nullable: true })
  radius?: number;

  @Property({ type: 'json' })
  elements!: StoredElement[];

  @Property({ type: 'json' })
  nameMatch!: NameMatchState;

  @Property({ type: 'json' })
  faceMatch!: FaceMatchState;

  @Property({ type: 'json' })
  notification!: NotificationFlags;

  @Property({ type: 'json', nullable: true })
  aadhaarCertDetails?: AadhaarCertDetails;

  @Property({ type: 'string', length: 16 })
  status: Opt<SignerStatus> = 'pending';

  @Property({ type: 'integer', default: 0 })
  failedAttempts: Opt<number> = 0;

  @Property({ type: 'datetime', nullable: true })
  completedAt?: Date;

  // The pre-signing checks (docs/signing.md): each is done once, in order, before the signature.
  @Property({ type: 'datetime', nullable: true })
  emailVerifiedAt?: Date;

  @Property({ type: 'datetime', nullable: true })
  mobileVerifiedAt?: Date;

  @Property({ type: 'json', nullable: true })
  location?: SignerLocation;

  @Property({ type: 'integer', default: 0 })
  faceAttempts: Opt<number> = 0;

  @Property({ type: 'datetime', nullable: true })
  invitedAt?: Date;
}
