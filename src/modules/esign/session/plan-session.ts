import { SIGNING_ORDERS, type EmailTemplateOverrides, type SignType } from '../esign-session.entity';
import { planStamp } from '../../stamps';
import { normalizeBackend } from '../../signing';
import type { SessionRequest, SignerInput } from './session.inputs';
import { planContact } from '../signers/contact';
import { AUTH_MODES, LIMITS, SIGN_TYPES, checkLanguage, checkLocation } from './validation';
import { planElements } from '../elements/plan-element';
import { documentIndex, requestedDocuments } from './plan-documents';
import { checkReferences, type SessionReferences } from './check-references';
import type { SessionPlan, SignerPlan } from './session-plan';
import {
  Problems,
  absoluteHttpUrl,
  emailSchema,
  isAbsent,
  oneOf,
  text,
  wholeNumber,
} from '../../../platform/validation/problems';
import type { DscRule, FaceMatchState, NameMatchState } from '../signers/signer-state';

function planSigner(
  problems: Problems,
  field: string,
  input: SignerInput,
  session: { signType?: SignType; authMode: number; maxRetry: number },
): SignerPlan | undefined {
  const fullName = text(problems, `${field}.full_name`, input.full_name, 200, true);
  const { email, mobile, countryCode } = planContact(problems, `${field}.`, input);
  const verifyEmail = input.verify_email ?? false;
  const verifyMobile = input.verify_mobile ?? false;
  if (verifyEmail && email === undefined) problems.missingField(`${field}.email`);
  if (verifyMobile && mobile === undefined) problems.missingField(`${field}.mobile`);
  const method = planSignMethod(problems, field, input, session);
  const reason = text(problems, `${field}.reason`, input.reason, 500);
  const language = checkLanguage(problems, field, input.language);

  const verifyLocation = input.verify_location ?? false;
  const locationSource = checkLocation(problems, field, input);
  const enforceGeofence = input.enforce_geofence ?? false;
  const faceMatch = planFaceMatch(problems, field, input);
  const dscRule = planDscRule(problems, field, input, method.signType);

  // No elements: an invisible signature.
  const elements = planElements(problems, field, input.elements, { requireSignature: false, requireValues: true });

  const { signType } = method;
  if (!fullName || !signType) return undefined;
  return {
    ...method,
    signType,
    fullName,
    email,
    countryCode: countryCode?.replace(/^\+/, ''),
    mobile,
    verifyEmail,
    verifyMobile,
    reason,
    acceptVirtualSign: input.accept_virtual_sign ?? false,
    verifyLocation,
    locationSource: verifyLocation ? (locationSource ?? 'device') : locationSource,
    language,
    enforceGeofence,
    latitude: input.latitude ?? undefined,
    longitude: input.longitude ?? undefined,
    radius: input.radius ?? undefined,
    elements,
    nameMatch: nameMatchOf(signType, input, fullName),
    faceMatch,
    dscRule,
    notification: {
      invite: input.notification?.invite ?? false,
      completion: input.notification?.completion ?? false,
      whatsapp: input.notification?.whatsapp ?? false,
    },
  };
}

/** How the signer signs: the session's sign type, auth mode and retries unless the signer names their own. */
function planSignMethod(
  problems: Problems,
  field: string,
  input: SignerInput,
  session: { signType?: SignType; authMode: number; maxRetry: number },
): { signType?: SignType; authMode: number; maxRetry: number; pfxId?: string } {
  let signType = session.signType;
  if (!isAbsent(input.sign_type)) {
    signType = oneOf(problems, `${field}.sign_type`, input.sign_type, SIGN_TYPES);
    if (!signType) problems.signType = true;
  }
  const pfxId = text(problems, `${field}.pfx_id`, input.pfx_id, 64);
  if (signType === 'pfx') {
    if (pfxId === undefined) {
      problems.invalidField(`${field}.pfx_id`, 'required when the signer signs with pfx');
      problems.signType = true;
    } else if (!pfxId.startsWith('pfx_')) {
      problems.invalidField(`${field}.pfx_id`, 'must be a pfx_... identifier');
    }
  }
  const authMode = oneOf(problems, `${field}.auth_mode`, input.auth_mode, AUTH_MODES) ?? session.authMode;
  const maxRetry = wholeNumber(problems, `${field}.max_retry`, input.max_retry, LIMITS.maxRetry) ?? session.maxRetry;
  return { signType, authMode, maxRetry, pfxId: signType === 'pfx' ? pfxId : undefined };
}

/** The face check asked for by a reference photo, with its threshold and attempts (defaults when not given). */
function planFaceMatch(problems: Problems, field: string, input: SignerInput): FaceMatchState {
  const faceRef = text(problems, `${field}.face_ref_file_id`, input.face_ref_file_id, 64);
  const threshold = input.face_match_threshold;
  if (
    !isAbsent(threshold) &&
    !(Number.isFinite(threshold) && threshold! >= LIMITS.faceMatchThreshold.min && threshold! <= LIMITS.faceMatchThreshold.max)
  ) {
    problems.invalidField(
      `${field}.face_match_threshold`,
      `must be from ${LIMITS.faceMatchThreshold.min} to ${LIMITS.faceMatchThreshold.max}`,
    );
  }
  const attempts = wholeNumber(problems, `${field}.face_max_attempts`, input.face_max_attempts, LIMITS.faceMaxAttempts);
  return {
    enforce: faceRef !== undefined,
    ref_file_id: faceRef ?? null,
    live_file_id: null,
    match_threshold: faceRef !== undefined ? (threshold ?? LIMITS.faceMatchThreshold.default) : null,
    max_attempts: faceRef !== undefined ? (attempts ?? LIMITS.faceMaxAttempts.default) : null,
    liveness_score: null,
    match_score: null,
  };
}

/**
 * `dsc_certificate`, for a `dsc` signer only: a PAN of the Income Tax Department's form (five letters, four digits, a
 * letter), an organisation, and a certificate serial in hex; an empty rule pins nothing.
 */
function planDscRule(problems: Problems, field: string, input: SignerInput, signType: SignType | undefined): DscRule | null {
  const rule = input.dsc_certificate;
  if (isAbsent(rule)) return null;
  if (signType !== 'dsc') {
    problems.invalidField(`${field}.dsc_certificate`, 'applies only to signers who sign with dsc');
    return null;
  }
  const pan = text(problems, `${field}.dsc_certificate.pan`, rule!.pan, 10)?.toUpperCase() ?? null;
  if (pan !== null && !/^[A-Z]{5}[0-9]{4}[A-Z]$/.test(pan))
    problems.invalidField(`${field}.dsc_certificate.pan`, 'must be a PAN: five letters, four digits, a letter');
  const organisation = text(problems, `${field}.dsc_certificate.organisation`, rule!.organisation, 200) ?? null;
  const serial =
    text(problems, `${field}.dsc_certificate.serial`, rule!.serial, 64)
      ?.toLowerCase()
      .replace(/^0+(?=.)/, '') ?? null;
  if (serial !== null && !/^[0-9a-f]+$/.test(serial))
    problems.invalidField(`${field}.dsc_certificate.serial`, 'must be the certificate serial number in hex');
  if (pan === null && organisation === null && serial === null) return null;
  return { pan, organisation, serial };
}

/**
 * Name match runs on Aadhaar signatures when asked, against the name the owner gave; a DSC is always matched (its
 * certificate names its holder, and a signature in another's name is refused before it is made).
 */
function nameMatchOf(signType: SignType, input: SignerInput, fullName: string): NameMatchState {
  const requested = signType === 'dsc' || (signType === 'aadhaar' && (input.name_match ?? false));
  return {
    enforce: requested,
    prefill_name: requested ? fullName : null,
    signer_name: null,
    score: null,
    status: requested ? 'pending' : 'skipped',
  };
}

/** What a session's `backend` may name: the configured ESPs and groups. */
export type EspChoices = Parameters<typeof normalizeBackend>[0];

/** The session's backend as kept (esp-route.ts), else `sandbox` when configured, else the first ESP. */
function planBackend(problems: Problems, value: string | null | undefined, esps: EspChoices): string {
  const fallback = Object.hasOwn(esps.esps, 'sandbox') ? 'sandbox' : (Object.keys(esps.esps)[0] ?? 'sandbox');
  if (isAbsent(value)) return fallback;
  const planned = normalizeBackend(esps, String(value));
  if ('backend' in planned) return planned.backend;
  problems.invalidField('backend', planned.problem);
  return fallback;
}

type SessionOptions = Omit<SessionPlan, 'signType' | 'documents' | 'stamp' | 'stampDocument' | 'signers'> & {
  signType?: SignType;
};

/**
 * Validates a whole session request (initialize-esign, or a template merged with runtime input) and
 * resolves what it refers to. One code path for both ways of starting a session.
 * `esps`: the configured ESP backends and groups (ESP_<NAME>_*, ESP_GROUP_<NAME>; `sandbox` built in), what
 * `backend` may name (one of them, or a list of ESPs: signing/esp/esp-route.ts).
 */
export async function planSession(
  references: SessionReferences,
  request: SessionRequest,
  esps: EspChoices,
): Promise<SessionPlan> {
  const problems = new Problems();
  const options = planSessionOptions(problems, request, esps);
  const { signType, authMode, maxRetry } = options;
  const signers = (request.signers ?? []).map((signer, index) =>
    planSigner(problems, `signers[${index}]`, signer, { signType, authMode, maxRetry }),
  );
  const requested = requestedDocuments(problems, request);
  const stamp = planStamp(problems, request.stamp);
  const stampDocument = documentIndex(problems, 'stamp.document', request.stamp?.document, requested.length) ?? 0;

  const early = problems.toError();
  if (early && (problems.missing.length > 0 || problems.signType)) throw early;

  const documents = await checkReferences(references, problems, requested, signers);
  const error = problems.toError();
  if (error) throw error;
  return { ...options, signType: signType!, documents, stamp, stampDocument, signers: signers as SignerPlan[] };
}

/** The session-wide settings, each checked, with its default where the request leaves it out. */
function planSessionOptions(problems: Problems, request: SessionRequest, esps: EspChoices): SessionOptions {
  const signType = oneOf(problems, 'sign_type', request.sign_type, SIGN_TYPES);
  if (isAbsent(request.sign_type)) problems.missingField('sign_type');
  else if (!signType) problems.signType = true;
  const signersInput = request.signers ?? [];
  if (signersInput.length === 0) problems.missingField('signers');
  if (signersInput.length > LIMITS.signers.max) problems.invalidField('signers', `at most ${LIMITS.signers.max} signers`);

  const authMode = oneOf(problems, 'auth_mode', request.auth_mode, AUTH_MODES) ?? 1;
  const backend = planBackend(problems, request.backend, esps);
  const expirySeconds =
    wholeNumber(problems, 'expiry_seconds', request.expiry_seconds, LIMITS.expirySeconds) ?? LIMITS.expirySeconds.default;
  const maxRetry = wholeNumber(problems, 'max_retry', request.max_retry, LIMITS.maxRetry) ?? LIMITS.maxRetry.default;
  const reminderIntervalHours =
    wholeNumber(problems, 'reminder_interval_hours', request.reminder_interval_hours, LIMITS.reminderIntervalHours) ?? null;
  const reminderMax =
    wholeNumber(problems, 'reminder_max', request.reminder_max, LIMITS.reminderMax) ?? LIMITS.reminderMax.default;
  if (!isAbsent(request.reminder_max) && reminderIntervalHours === null && isAbsent(request.reminder_interval_hours)) {
    problems.invalidField('reminder_max', 'needs reminder_interval_hours');
  }
  const signingOrder = oneOf(problems, 'signing_order', request.signing_order, SIGNING_ORDERS) ?? 'sequential';
  const folder = text(problems, 'folder', request.folder, 200);
  const sender = text(problems, 'sender', request.sender, 200);
  const redirectUrl = absoluteHttpUrl(problems, 'redirect_url', request.redirect_url);
  const emailTemplateOverrides = planEmailTemplateOverrides(problems, request.email_template_overrides);
  return {
    signType,
    authMode,
    backend,
    folder,
    expirySeconds,
    maxRetry,
    allowDownload: request.allow_download ?? true,
    allowDelegation: request.allow_delegation ?? false,
    appendCertificate: request.append_certificate ?? false,
    signingOrder,
    reminderIntervalHours,
    reminderMax,
    redirectUrl,
    sender,
    emailTemplateOverrides,
  };
}

function planEmailTemplateOverrides(
  problems: Problems,
  overrides: SessionRequest['email_template_overrides'],
): EmailTemplateOverrides | undefined {
  if (!overrides) return undefined;
  const planned = {
    company_name: text(problems, 'email_template_overrides.company_name', overrides.company_name, 200) ?? null,
    legal_name: text(problems, 'email_template_overrides.legal_name', overrides.legal_name, 200) ?? null,
    support_email: text(problems, 'email_template_overrides.support_email', overrides.support_email, 320) ?? null,
  };
  if (planned.support_email && !emailSchema.safeParse(planned.support_email).success) {
    problems.invalidField('email_template_overrides.support_email', 'must be an email address');
  }
  return planned;
}
