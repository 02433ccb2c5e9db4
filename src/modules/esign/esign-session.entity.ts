import { Collection, Entity, Index, ManyToOne, OneToMany, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../platform/db/row-ref';
import type { Language } from '../../platform/i18n';
import { newId } from '../../platform/ids';
import { StoredFile } from '../files';
import type { AadhaarCertDetails } from '../signing';
import { User } from '../users';
import type {
  DscRule,
  FaceMatchState,
  NameMatchState,
  NotificationFlags,
  SignerLocation,
  SignerStatus,
  StoredElement,
} from './signers/signer-state';

export type SessionStatus = 'pending' | 'completed' | 'expired' | 'cancelled' | 'declined';

/** `sequential`: signers sign in array order; `parallel`: every signer may sign at once, in any order. */
export type SigningOrder = 'sequential' | 'parallel';
export const SIGNING_ORDERS: readonly SigningOrder[] = ['sequential', 'parallel'];
/** `dsc`: the signer's own Digital Signature Certificate on a USB token, through the bridge on their computer. */
export type SignType = 'aadhaar' | 'suresign' | 'pfx' | 'dsc';

export interface EmailTemplateOverrides {
  company_name?: string | null;
  legal_name?: string | null;
  support_email?: string | null;
}

@Entity({ tableName: 'esign_sessions' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
@Index({ properties: ['status', 'expiresAt'] })
export class EsignSession {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('esign');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 16 })
  signType!: SignType;

  @Property({ type: 'integer' })
  authMode!: number;

  @Property({ type: 'string', length: 40 })
  backend!: string;

  /** The first document's upload and name: the contract's `file_id` and `filename`, fixed at creation. */
  @ManyToOne(() => StoredFile)
  file!: StoredFile;

  /**
   * The first document's current PDF (the contract's `current_pdf_file_id`): a copy of its EsignDocument row's,
   * kept so the hottest read (details) stays one row. Written only with it, by setCurrentPdf (documents.ts).
   */
  @ManyToOne(() => StoredFile)
  currentPdfFile!: StoredFile;

  @Property({ type: 'string', length: 255 })
  filename!: string;

  @Property({ type: 'string', length: 200, nullable: true })
  folder?: string;

  @Property({ type: 'boolean' })
  allowDownload!: boolean;

  /** Whether a signer may hand their place to someone else (the owner always may: reassign-signer). */
  @Property({ type: 'boolean', default: false })
  allowDelegation: Opt<boolean> = false;

  /** Whether the certificate of completion is also appended to the signed PDF (its last incremental update). */
  @Property({ type: 'boolean', default: false })
  appendCertificate: Opt<boolean> = false;

  /** The certificate of completion, made when the session completes. */
  @ManyToOne(() => StoredFile, { nullable: true, deleteRule: 'set null' })
  completionCertificateFile?: StoredFile;

  /** Every so many hours the signer whose turn it is gets a reminder, at most `reminderMax` each; null: none. */
  @Property({ type: 'integer', nullable: true })
  reminderIntervalHours?: number;

  @Property({ type: 'integer', default: 3 })
  reminderMax: Opt<number> = 3;

  @Property({ type: 'boolean', default: false })
  archived: Opt<boolean> = false;

  @Property({ type: 'integer' })
  expirySeconds!: number;

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'integer' })
  maxRetry!: number;

  @Property({ type: 'string', length: 2048, nullable: true })
  redirectUrl?: string;

  @Property({ type: 'string', length: 200, nullable: true })
  sender?: string;

  @Property({ type: 'json', nullable: true })
  emailTemplateOverrides?: EmailTemplateOverrides;

  /**
   * Sequential sessions: the index of the signer whose turn it is (signers sign in array order). In both orders it
   * equals the number of signatures made so far, so the session is complete when it reaches the signer count.
   */
  @Property({ type: 'integer', default: 0 })
  signerIdx: Opt<number> = 0;

  @Property({ type: 'string', length: 16, default: 'sequential' })
  signingOrder: Opt<SigningOrder> = 'sequential';

  /** Stamp certificate pages placed before the stamped document; that document's element pages shift by this much. */
  @Property({ type: 'integer', default: 0 })
  stampPageCount: Opt<number> = 0;

  /** The document (position) the stamp pages are in front of. */
  @Property({ type: 'integer', default: 0 })
  stampDocument: Opt<number> = 0;

  @Property({ type: 'string', length: 16 })
  status: Opt<SessionStatus> = 'pending';

  /** When the documents got their signature fields; from then on every change is an incremental update. */
  @Property({ type: 'datetime', nullable: true })
  preparedAt?: Date;

  @Property({ type: 'string', length: 500, nullable: true })
  cancelReason?: string;

  @Property({ type: 'datetime', nullable: true })
  endedAt?: Date;

  /**
   * The template (and its version) the session was started from, if any. Named, not imported: templates
   * build on sessions, not the other way round (the foreign key stays in the database).
   */
  @ManyToOne({ entity: 'Template', nullable: true })
  @Index()
  template?: RowRef;

  @Property({ type: 'integer', nullable: true })
  templateVersion?: number;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @OneToMany(() => Signer, (signer) => signer.session, { orderBy: { position: 'asc' } })
  signers = new Collection<Signer>(this);

  @OneToMany(() => EsignDocument, (document) => document.session, { orderBy: { position: 'asc' } })
  documents = new Collection<EsignDocument>(this);
}

/**
 * One document of a session's envelope, in the order signers see them (`position` 0 is the contract's `file_id`).
 * A session made with `file_id` alone has one. Elements name their document by position (StoredElement.document).
 */
@Entity({ tableName: 'esign_documents' })
@Unique({ properties: ['session', 'position'] })
export class EsignDocument {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('doc');

  @ManyToOne(() => EsignSession, { deleteRule: 'cascade' })
  session!: EsignSession;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'string', length: 255 })
  name!: string;

  /** The PDF the integrator uploaded. */
  @ManyToOne(() => StoredFile)
  file!: StoredFile;

  /** The PDF signers see and sign: the upload (with stamp pages in front), then each signed revision. */
  @ManyToOne(() => StoredFile)
  currentPdfFile!: StoredFile;
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

  /** The language the signer's messages are written in (platform/i18n's LANGUAGES); none set: English. */
  @Property({ type: 'string', length: 8, nullable: true })
  language?: Language;

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

  /** A DSC signer's certificate must be this one (its PAN, organisation or serial), when the owner pinned it. */
  @Property({ type: 'json', nullable: true })
  dscRule?: DscRule | null;

  @Property({ type: 'string', length: 16 })
  status: Opt<SignerStatus> = 'pending';

  @Property({ type: 'integer', default: 0 })
  failedAttempts: Opt<number> = 0;

  /** Why the signer declined (required to decline); the session ended with it. */
  @Property({ type: 'string', length: 500, nullable: true })
  declineReason?: string;

  @Property({ type: 'datetime', nullable: true })
  declinedAt?: Date;

  @Property({ type: 'integer', default: 0 })
  remindersSent: Opt<number> = 0;

  @Property({ type: 'datetime', nullable: true })
  lastRemindedAt?: Date;

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
