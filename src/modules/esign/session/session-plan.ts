import type { StoredFile } from '../../files';
import type { Language } from '../../../platform/i18n';
import type { EmailTemplateOverrides, SignType, SigningOrder } from '../esign-session.entity';
import type { StampPlan } from '../../stamps';
import type { DscRule, FaceMatchState, NameMatchState, NotificationFlags, StoredElement } from '../signers/signer-state';

/** One signer of a planned session. */
export interface SignerPlan {
  signType: SignType;
  authMode: number;
  maxRetry: number;
  pfxId?: string;
  fullName: string;
  email?: string;
  countryCode?: string;
  mobile?: string;
  verifyEmail: boolean;
  verifyMobile: boolean;
  reason?: string;
  acceptVirtualSign: boolean;
  verifyLocation: boolean;
  locationSource?: 'device' | 'ip';
  /** The language of the signer's messages; none: English. */
  language?: Language;
  enforceGeofence: boolean;
  latitude?: number;
  longitude?: number;
  radius?: number;
  elements: StoredElement[];
  nameMatch: NameMatchState;
  faceMatch: FaceMatchState;
  dscRule: DscRule | null;
  notification: NotificationFlags;
}

/** One document of the envelope: its upload and the name signers see. */
export interface DocumentPlan {
  file: StoredFile;
  name: string;
}

/** What a validated session request becomes: everything createSessions writes, each value checked. */
export interface SessionPlan {
  signType: SignType;
  authMode: number;
  backend: string;
  /** In the order signers see them; the first is the contract's `file_id`. */
  documents: DocumentPlan[];
  folder?: string;
  expirySeconds: number;
  maxRetry: number;
  allowDownload: boolean;
  allowDelegation: boolean;
  appendCertificate: boolean;
  signingOrder: SigningOrder;
  /** Null: no reminders. */
  reminderIntervalHours: number | null;
  reminderMax: number;
  redirectUrl?: string;
  sender?: string;
  emailTemplateOverrides?: EmailTemplateOverrides;
  stamp: StampPlan | null;
  /** The document the stamp pages go in front of. */
  stampDocument: number;
  signers: SignerPlan[];
}
