// The signer API, authenticated by the token in this page's address (`/sign/{token}`).

import { formatDateTime } from './dom.js';
import { t } from './i18n.js';

const BASE = '/signer-api';

/** The signer token of this page, or null when the address has none. */
export function tokenFromPath(pathname = location.pathname) {
  const match = /^\/sign\/([^/]+)\/?$/.exec(pathname);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

/** A failed call: HTTP status (0 = no answer), the envelope's message and its per-field problems. */
export class ApiError extends Error {
  constructor(status, message, problems = [], details = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.problems = problems;
    // Machine-readable extras some refusals carry (e.g. `retry_after_seconds`), or null.
    this.details = details;
    // The envelope's message is a stable code (`otp_invalid`) or, for conflicts, a sentence.
    this.code = /^[a-z][a-z_]*$/.test(message) ? message : null;
  }

  /** The problem reported for one input, e.g. `2 attempt(s) left` for `otp`. */
  problemFor(field) {
    return this.problems.find((problem) => problem.field === field)?.problem ?? null;
  }
}

// The message of each refusal code the signer API answers (`errors.<code>` in the page's catalog). The keys are
// looked up when a refusal is described (the catalog loads after the modules), never here.
const CODES = new Set([
  'unauthorized',
  'forbidden',
  'otp_invalid',
  'otp_expired',
  'too_many_requests',
  'rate_limited',
  'outside_geofence',
  'location_unavailable',
  'face_mismatch',
  'face_not_found',
  'verification_required',
  'missing_fields',
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'unprocessable_content',
  'not_found',
  'conflict',
  'network_error',
  'internal_error',
  'service_unavailable',
  'dsc_revocation_unavailable',
]);

/** A sentence: capitalised, ending with a full stop unless it ends with one already (a danda counts). */
export const sentence = (text) => {
  const trimmed = String(text).trim();
  if (!trimmed) return '';
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?।॥]$/.test(capital) ? capital : `${capital}.`;
};

/** The number of attempts a problem says are left (`2 attempt(s) left`, `no attempts left: ...`), or null. */
export function attemptsLeftOf(problem) {
  const text = String(problem ?? '');
  const counted = /(\d+) attempt\(?s?\)? left/.exec(text);
  if (counted) return Number(counted[1]);
  return /\bno attempts left\b/.test(text) ? 0 : null;
}

/** "2 attempt(s) left.", in the page's language. */
export const attemptsLeftText = (count) => t('errors.attempts_left', { count });

/** Seconds as the page says a wait: whole minutes from two minutes on. */
const waitText = (seconds) =>
  seconds >= 120
    ? t('errors.wait_minutes', { minutes: Math.ceil(seconds / 60) })
    : t('errors.wait_seconds', { seconds: Math.max(1, Math.round(seconds)) });

/** A distance the service wrote (`2.1 km`, `500 m`) in the page's language; null when it is not one. */
function distanceText(written) {
  const match = /^([\d.]+) (km|m)$/.exec(String(written).trim());
  if (!match) return null;
  return match[2] === 'km' ? t('location.distance_km', { km: match[1] }) : t('location.distance_m', { metres: match[1] });
}

const CHECK_KINDS = new Set(['email', 'mobile', 'location', 'face']);
const checkOf = (kind) => (CHECK_KINDS.has(kind) ? kind : 'other');

/**
 * The sentences the service writes instead of a code (a conflict: the session moved on), each to its message; one
 * this page does not know is shown as the service wrote it.
 */
const SENTENCES = [
  [/^the session is (\w+)$/, (m) => t('errors.session_status', { status: m[1] })],
  [/^this signer is (\w+)$/, (m) => t('errors.signer_status', { status: m[1] })],
  [/^it is not this signer’s turn yet$/, () => t('errors.not_signers_turn')],
  [/^the (\w+) check has already passed$/, (m) => t('errors.check_already_passed', { check: checkOf(m[1]) })],
  [/^the (\w+) check was not requested for this signer$/, (m) => t('errors.check_not_requested', { check: checkOf(m[1]) })],
  [/^no face match attempts left$/, () => t('errors.no_face_attempts')],
  [/^the reference photo of this signer is no longer available$/, () => t('errors.reference_photo_unavailable')],
  [/^the reference photo cannot be used\b/, () => t('errors.reference_photo_unusable')],
  [/^face matching is unavailable right now/, () => t('errors.face_matching_unavailable')],
  [/^this signer has no email address$/, () => t('errors.no_recipient', { channel: 'email' })],
  [/^this signer has no mobile number$/, () => t('errors.no_recipient', { channel: 'mobile' })],
  [/^downloading the signed document is not allowed$/, () => t('errors.download_not_allowed')],
  [/^the session has no document \d+$/, () => t('errors.no_document')],
  [/^the PFX certificate of this signer was deleted/, () => t('errors.pfx_deleted')],
  [/^this signer signs with (\w+)$/, (m) => t('errors.signs_with', { kind: m[1] })],
  [/^this session does not allow delegation$/, () => t('errors.no_delegation')],
  [/^an eSign transaction of this signer is open with the values given before it/, () => t('errors.esp_open_values')],
  [
    /^an eSign transaction of this signer is open until (\S+): finish/,
    (m) => t('errors.esp_open_until', { time: formatDateTime(m[1]) || m[1] }),
  ],
  [/^eSign transaction \S+ is no longer open/, () => t('errors.esp_transaction_closed')],
  [/^the eSign Service Provider refused the request: (.+)$/s, (m) => t('errors.esp_refused', { reason: sentence(m[1]) })],
  [/^the eSign Service Provider did not take the request: (.+)$/s, (m) => t('errors.esp_not_taken', { reason: sentence(m[1]) })],
  [
    /^no eSign Service Provider of this session could take the request \((.*)\); no attempt was used/,
    (m) => t('errors.esp_none_available', { providers: m[1] }),
  ],
  [/^signing backend \S+ is not available$/, () => t('errors.signing_backend_unavailable')],
  [/^the document changed since this signature was prepared/, () => t('errors.dsc_document_changed')],
  [/^this DSC transaction timed out/, () => t('errors.dsc_transaction_timed_out')],
  [/^this DSC transaction is (\w+)/, () => t('errors.dsc_transaction_closed')],
];

function sentenceText(message) {
  const text = String(message).trim();
  for (const [pattern, say] of SENTENCES) {
    const match = pattern.exec(text);
    if (match) return say(match);
  }
  return sentence(text);
}

/**
 * The service's per-field problems the page says in its own words (`null`: said already by the code's message, so
 * left out); one it does not know is shown as the service wrote it.
 */
const PROBLEMS = [
  [/^required$/, (_m, code) => (code === 'missing_fields' ? null : t('errors.required'))],
  [/^required: say why you decline to sign$/, () => t('decline.reason_required')],
  [/^(?:must be )?at most (\d+) characters$/, (m) => t('errors.at_most_characters', { max: Number(m[1]) })],
  [/^(?:must be )?at least (\d+) characters$/, (m) => t('errors.at_least_characters', { min: Number(m[1]) })],
  [/^must not contain (?:NUL or other )?control characters$/, () => t('errors.control_characters')],
  [/^a value the service cannot store/, () => t('errors.value_unstorable')],
  [/^the signer must consent to sign/, () => t('feedback.consent_required')],
  [/^the 6-digit code that was sent$/, () => t('otp.digits_only')],
  [/^not passed yet$/, () => null],
  [/retry shortly$/, () => null],
  [/^send the \w+ as image\/jpeg or image\/png$|^a JPEG or PNG \w+$/, () => t('errors.unsupported_media_type')],
  [/^the document or image .* to process$/, () => null],
];

function problemText(problem, code) {
  const text = String(problem).trim();
  for (const [pattern, say] of PROBLEMS) {
    const match = pattern.exec(text);
    if (match) return say(match, code);
  }
  return sentence(text);
}

/** A distance refusal (`you are 2.1 km from the signing location; signing is allowed within 500 m of it`). */
function geofenceText(problem) {
  const match = /^you are (.+?) from the signing location; signing is allowed within (.+?) of it$/.exec(String(problem ?? ''));
  const distance = match && distanceText(match[1]);
  const radius = match && distanceText(match[2]);
  return distance && radius ? t('errors.geofence_distance', { distance, radius }) : null;
}

/** A face refusal's problem (`the face does not match (score 41.2, 80 needed); 2 attempt(s) left`). */
function faceTexts(code, problem) {
  if (problem === null) return [t(`errors.${code}`)];
  const [why, left = ''] = String(problem).split('; ');
  const count = attemptsLeftOf(left) ?? attemptsLeftOf(why);
  const scored = /^the face does not match \(score ([\d.]+), ([\d.]+) needed\)$/.exec(why);
  if (scored && count !== null)
    return [t('errors.face_mismatch'), t('errors.face_score', { score: scored[1], threshold: scored[2], count })];
  const several = /^several faces in the photo/.test(why);
  const known = scored || several || /^no face found in the photo$/.test(why) || /^\d+ attempt|^no attempts left/.test(why);
  if (!known) return [t(`errors.${code}`), sentence(problem)];
  return [several ? t('errors.face_several') : t(`errors.${code}`), count === null ? '' : attemptsLeftText(count)];
}

/** The seconds a rate limit asks to wait: the envelope's figure, else the problem's own (`retry in 12 s`). */
function retryAfterOf(error, problem) {
  const figure = Number(error.details?.retry_after ?? error.details?.retry_after_seconds);
  if (Number.isFinite(figure) && figure > 0) return figure;
  const written = /(?:retry|try again) in (\d+) s$/.exec(String(problem ?? ''));
  return written ? Number(written[1]) : null;
}

/**
 * The code's own sentences, from the problems it is known to carry; `handled` are the fields said by them (the
 * other problems follow).
 */
function codeTexts(error) {
  const { code } = error;
  const problem = (field) => error.problemFor(field);
  switch (code) {
    case 'otp_invalid': {
      const count = attemptsLeftOf(problem('code'));
      return { texts: [t('errors.otp_invalid'), count === null ? '' : attemptsLeftText(count)], handled: ['code'] };
    }
    case 'otp_expired':
      return {
        texts: [/^no code is open/.test(problem('code') ?? '') ? t('errors.otp_none') : t('errors.otp_expired')],
        handled: ['code'],
      };
    case 'too_many_requests': {
      if (/^too many wrong codes/.test(problem('code') ?? ''))
        return { texts: [t('errors.otp_too_many_wrong')], handled: ['code'] };
      const channel = problem('channel') ?? '';
      const seconds = retryAfterOf(error, channel);
      const hourly = /^at most (\d+) codes an hour/.exec(channel);
      if (hourly && seconds)
        return { texts: [t('errors.otp_hourly_limit', { limit: Number(hourly[1]) }), waitText(seconds)], handled: ['channel'] };
      if (/^a code was sent moments ago/.test(channel) && seconds)
        return { texts: [t('errors.otp_sent_moments_ago'), waitText(seconds)], handled: ['channel'] };
      return {
        texts: seconds ? [t('errors.too_many_attempts'), waitText(seconds)] : [t('errors.too_many_requests')],
        handled: ['channel', 'request'],
      };
    }
    case 'rate_limited': {
      const seconds = retryAfterOf(error, problem('request'));
      return { texts: [t('errors.rate_limited'), seconds ? waitText(seconds) : t('errors.wait_moment')], handled: ['request'] };
    }
    case 'outside_geofence': {
      const distance = geofenceText(problem('location'));
      return distance
        ? { texts: [t('errors.outside_geofence'), distance], handled: ['location'] }
        : { texts: [t('errors.outside_geofence')], handled: [] };
    }
    case 'location_unavailable':
      return { texts: [t('errors.location_unavailable')], handled: ['location'] };
    case 'face_mismatch':
    case 'face_not_found':
      return { texts: faceTexts(code, problem('image')), handled: ['image'] };
    case 'unsupported_media_type':
      return { texts: [t('errors.unsupported_media_type')], handled: error.problems.map((entry) => entry.field) };
    default:
      break;
  }
  if (CODES.has(code)) return { texts: [t(`errors.${code}`)], handled: [] };
  if (code.startsWith('dsc_')) return { texts: [t('errors.dsc_refused')], handled: [] };
  if (error.status >= 500 || error.status === 0) return { texts: [t('errors.internal_error')], handled: [] };
  if (error.status === 429) return { texts: [t('errors.too_many_requests')], handled: [] };
  return { texts: [t('errors.refused', { code })], handled: [] };
}

/**
 * What to tell the signer about a failed call, in the page's language: the code's message (or the service's
 * sentence), followed by the field problems that are not already covered by `except` (shown next to their inputs).
 * A problem the page knows is said in its own words; one it does not is shown as the service wrote it.
 */
export function describeError(error, { except = [] } = {}) {
  if (!(error instanceof ApiError)) return t('errors.internal_error');
  const { texts, handled } = error.code ? codeTexts(error) : { texts: [sentenceText(error.message)], handled: [] };
  const extra = error.problems
    .filter((entry) => !except.includes(entry.field) && !handled.includes(entry.field))
    .map((entry) => problemText(entry.problem, error.code));
  return [...texts, ...extra].filter(Boolean).join(' ');
}

async function call(method, path, { json, body, contentType } = {}) {
  const token = tokenFromPath();
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (contentType) headers['content-type'] = contentType;
  let response;
  try {
    response = await fetch(`${BASE}${path}`, { method, headers, body, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(0, 'network_error');
  }
  return response;
}

async function envelopeOf(response) {
  let envelope = null;
  try {
    envelope = await response.json();
  } catch {
    // Not JSON (a proxy's error page): judged by the status alone.
  }
  if (!response.ok || !envelope || envelope.success !== true) {
    const fallback = response.status >= 500 ? 'internal_error' : response.status === 401 ? 'unauthorized' : 'bad_request';
    const details = envelope?.details && typeof envelope.details === 'object' ? envelope.details : null;
    throw new ApiError(
      response.status,
      envelope?.message || fallback,
      Array.isArray(envelope?.errors) ? envelope.errors : [],
      details,
    );
  }
  return envelope.data;
}

export async function getJson(path) {
  return envelopeOf(await call('GET', path));
}

export async function postJson(path, json = {}) {
  return envelopeOf(await call('POST', path, { json }));
}

/** Raw bytes (a photo) as the request body. */
export async function postBytes(path, blob) {
  return envelopeOf(await call('POST', path, { body: blob, contentType: blob.type }));
}

/** The current PDF of the envelope's document at `position` (the first by default). */
export async function getDocument(position = 0) {
  const response = await call('GET', position ? `/document?document=${encodeURIComponent(position)}` : '/document');
  if (!response.ok) await envelopeOf(response);
  return new Uint8Array(await response.arrayBuffer());
}
