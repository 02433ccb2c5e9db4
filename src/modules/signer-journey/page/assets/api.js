// The signer API, authenticated by the token in this page's address (`/sign/{token}`).

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

const FRIENDLY = {
  unauthorized: 'This signing link is not valid.',
  otp_invalid: 'That code is not correct.',
  otp_expired: 'That code has expired. Ask for a new one.',
  too_many_requests: 'Too many attempts. Wait a moment and try again.',
  outside_geofence: 'You are outside the area where this document may be signed.',
  face_mismatch: 'The photo does not match the reference photo.',
  face_not_found: 'No face was found in the photo. Face the camera in good light and try again.',
  verification_required: 'Please complete the verification steps first.',
  missing_fields: 'Some information is missing.',
  bad_request: 'Some information is not valid.',
  payload_too_large: 'The photo is too large. Choose a smaller one.',
  unsupported_media_type: 'Use a JPEG or PNG photo.',
  not_found: 'This step is not available yet.',
  network_error: 'Could not reach the server. Check your connection and try again.',
  internal_error: 'Something went wrong on our side. Try again in a moment.',
  service_unavailable: 'The service is busy. Try again in a moment.',
};

export const sentence = (text) => {
  const trimmed = String(text).trim();
  if (!trimmed) return '';
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

/**
 * What to tell the signer about a failed call: a sentence for the code (or the server's own sentence),
 * followed by the field problems that are not already covered by `except` (shown next to their inputs).
 */
export function describeError(error, { except = [] } = {}) {
  if (!(error instanceof ApiError)) return FRIENDLY.internal_error;
  // Codes whose message the server writes for the signer (how long to wait, how far away).
  const base = error.code
    ? (FRIENDLY[error.code] ?? (error.status >= 500 ? FRIENDLY.internal_error : sentence(error.code.replaceAll('_', ' '))))
    : sentence(error.message);
  const extra = error.problems
    .filter((problem) => !except.includes(problem.field))
    .map((problem) => sentence(problem.problem))
    .join(' ');
  return extra ? `${base} ${extra}` : base;
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
