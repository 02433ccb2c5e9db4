import { dateOf, leanRows } from '../../../platform/db/lean-sql';
import type { Orm } from '../../../platform/db/orm';
import type { EsignSession, Signer } from '../esign-session.entity';

/**
 * What the session view reads (session.types.ts): an entity, or a lean row mapped to the same shape.
 * The owner's details read is the API's hottest call, and the ORM's query building and hydration cost
 * several times what the database does for it, so that read takes rows; every write still goes through the ORM.
 */
export type SessionRecord = Pick<
  EsignSession,
  | 'id'
  | 'signType'
  | 'authMode'
  | 'backend'
  | 'filename'
  | 'folder'
  | 'allowDownload'
  | 'allowDelegation'
  | 'appendCertificate'
  | 'signingOrder'
  | 'reminderIntervalHours'
  | 'reminderMax'
  | 'archived'
  | 'expirySeconds'
  | 'expiresAt'
  | 'maxRetry'
  | 'redirectUrl'
  | 'sender'
  | 'emailTemplateOverrides'
  | 'signerIdx'
  | 'stampPageCount'
  | 'stampDocument'
  | 'status'
  | 'cancelReason'
  | 'templateVersion'
  | 'createdAt'
> & {
  user: { id: string };
  file: { id: string };
  currentPdfFile: { id: string };
  template?: { id: string };
};

/** What the signer view reads, from an entity or a lean row. */
export type SignerRecord = Pick<
  Signer,
  | 'id'
  | 'position'
  | 'tokenSealed'
  | 'signType'
  | 'authMode'
  | 'maxRetry'
  | 'pfxId'
  | 'fullName'
  | 'email'
  | 'countryCode'
  | 'mobile'
  | 'verifyEmail'
  | 'verifyMobile'
  | 'reason'
  | 'acceptVirtualSign'
  | 'verifyLocation'
  | 'locationSource'
  | 'language'
  | 'enforceGeofence'
  | 'latitude'
  | 'longitude'
  | 'radius'
  | 'elements'
  | 'nameMatch'
  | 'faceMatch'
  | 'notification'
  | 'aadhaarCertDetails'
  | 'status'
  | 'emailVerifiedAt'
  | 'mobileVerifiedAt'
  | 'location'
  | 'declineReason'
  | 'declinedAt'
> & { session: { id: string } };

type Row = Record<string, any>;

const SESSION_COLUMNS = `id, user_id, sign_type, auth_mode, backend, file_id, current_pdf_file_id, filename, folder,
  allow_download, allow_delegation, append_certificate, signing_order, reminder_interval_hours, reminder_max, archived, expiry_seconds, expires_at, max_retry, redirect_url, sender, email_template_overrides,
  signer_idx, stamp_page_count, stamp_document, status, cancel_reason, template_id, template_version, created_at`;

const SIGNER_COLUMNS = `id, session_id, position, token_sealed, sign_type, auth_mode, max_retry, pfx_id, full_name, email,
  country_code, mobile, verify_email, verify_mobile, reason, accept_virtual_sign, verify_location, location_source, language,
  enforce_geofence, latitude, longitude, radius, elements, name_match, face_match, notification, aadhaar_cert_details,
  status, email_verified_at, mobile_verified_at, location, decline_reason, declined_at`;

/** The user's session, or null when there is none of that id (another user's session included). */
export async function readOwnSessionRecord(orm: Orm, userId: string, clientId: string): Promise<SessionRecord | null> {
  const rows = await leanRows<Row>(orm, `select ${SESSION_COLUMNS} from esign_sessions where id = $1 and user_id = $2`, [
    clientId,
    userId,
  ]);
  return rows[0] ? sessionRecordOf(rows[0]) : null;
}

/** The signers of each session, in signing order. */
export async function readSignerRecords(orm: Orm, sessionIds: readonly string[]): Promise<Map<string, SignerRecord[]>> {
  const rows = await leanRows<Row>(
    orm,
    `select ${SIGNER_COLUMNS} from esign_signers where session_id = any($1) order by session_id, position`,
    [sessionIds],
  );
  const bySession = new Map<string, SignerRecord[]>(sessionIds.map((id) => [id, []]));
  for (const row of rows) bySession.get(row.session_id)?.push(signerRecordOf(row));
  return bySession;
}

// Nullable columns become undefined, as the ORM leaves optional properties of a hydrated entity.
const optional = <T>(value: T | null): T | undefined => value ?? undefined;

function sessionRecordOf(row: Row): SessionRecord {
  return {
    id: row.id,
    user: { id: row.user_id },
    signType: row.sign_type,
    authMode: row.auth_mode,
    backend: row.backend,
    file: { id: row.file_id },
    currentPdfFile: { id: row.current_pdf_file_id },
    filename: row.filename,
    folder: optional(row.folder),
    allowDownload: row.allow_download,
    allowDelegation: row.allow_delegation,
    appendCertificate: row.append_certificate,
    signingOrder: row.signing_order,
    reminderIntervalHours: row.reminder_interval_hours ?? undefined,
    reminderMax: row.reminder_max,
    archived: row.archived,
    expirySeconds: row.expiry_seconds,
    expiresAt: dateOf(row.expires_at),
    maxRetry: row.max_retry,
    redirectUrl: optional(row.redirect_url),
    sender: optional(row.sender),
    emailTemplateOverrides: optional(row.email_template_overrides),
    signerIdx: row.signer_idx,
    stampPageCount: row.stamp_page_count,
    stampDocument: row.stamp_document,
    status: row.status,
    cancelReason: optional(row.cancel_reason),
    template: row.template_id == null ? undefined : { id: row.template_id },
    templateVersion: optional(row.template_version),
    createdAt: dateOf(row.created_at),
  };
}

function signerRecordOf(row: Row): SignerRecord {
  return {
    id: row.id,
    session: { id: row.session_id },
    position: row.position,
    tokenSealed: row.token_sealed,
    signType: row.sign_type,
    authMode: row.auth_mode,
    maxRetry: row.max_retry,
    pfxId: optional(row.pfx_id),
    fullName: row.full_name,
    email: optional(row.email),
    countryCode: optional(row.country_code),
    mobile: optional(row.mobile),
    verifyEmail: row.verify_email,
    verifyMobile: row.verify_mobile,
    reason: optional(row.reason),
    acceptVirtualSign: row.accept_virtual_sign,
    verifyLocation: row.verify_location,
    locationSource: optional(row.location_source),
    language: optional(row.language),
    enforceGeofence: row.enforce_geofence,
    latitude: optional(row.latitude),
    longitude: optional(row.longitude),
    radius: optional(row.radius),
    elements: row.elements,
    nameMatch: row.name_match,
    faceMatch: row.face_match,
    notification: row.notification,
    aadhaarCertDetails: optional(row.aadhaar_cert_details),
    status: row.status,
    emailVerifiedAt: dateOf(row.email_verified_at),
    mobileVerifiedAt: dateOf(row.mobile_verified_at),
    declineReason: row.decline_reason ?? undefined,
    declinedAt: dateOf(row.declined_at),
    location: optional(row.location),
  };
}
