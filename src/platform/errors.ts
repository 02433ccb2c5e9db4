/**
 * The one application error. `code` is the stable, documented message of the contract (or one this
 * service adds, listed in docs/api.md); the HTTP status comes from this table and nowhere else.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  missing_fields: 400,
  file_empty: 400,
  file_too_large: 400,
  invalid_pdf: 400,
  invalid_asset: 400,
  invalid_file_id: 400,
  invalid_sign_type: 400,
  signer_count_mismatch: 400,
  invalid_state_code: 400,
  invalid_article_id: 400,
  pfx_invalid: 400,
  invalid_aadhaar_number: 400,
  aadhaar_not_enrolled: 400,
  otp_invalid: 400,
  otp_expired: 400,
  face_mismatch: 400,
  face_not_found: 400,
  pfx_wrong_password: 400,
  pfx_no_private_key: 400,
  pfx_certificate_expired: 400,
  webhook_target_refused: 400,
  query_too_complex: 400,
  unauthorized: 401,
  insufficient_balance: 402,
  /**
   * An operation the token may not run: an admin operation with a user's token, one outside the token's scopes, or
   * anything but its resource's reads for a browser token. Never for another user's resource: that is not_found.
   */
  forbidden: 403,
  invalid_download_link: 403,
  outside_geofence: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  verification_required: 409,
  download_link_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  stamp_combination_not_found: 422,
  inventory_conflict: 422,
  location_unavailable: 422,
  document_certified: 422,
  unprocessable_content: 422,
  // A DSC signer's certificate or token signature refused (docs/signing.md, DSC): the signer chooses another.
  dsc_certificate_invalid: 422,
  dsc_untrusted: 422,
  dsc_expired: 422,
  dsc_no_non_repudiation: 422,
  dsc_revoked: 422,
  dsc_name_mismatch: 422,
  dsc_not_pinned: 422,
  dsc_signature_invalid: 422,
  too_many_requests: 429,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  /** Whether a DSC is revoked could not be learnt now (its CA's OCSP and CRL did not answer): try again shortly. */
  dsc_revocation_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldProblem {
  field: string;
  problem: string;
}

export interface AppErrorOptions {
  /** Replaces the code in the envelope `message` where the contract documents a text instead of a code. */
  message?: string;
  /** Which inputs failed and why; shown as `errors` in the REST envelope and in GraphQL extensions. */
  errors?: FieldProblem[];
  /** Figures a client can act on (a cost and its limit); shown in GraphQL extensions beside the code. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly errors?: FieldProblem[];
  readonly details?: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    options: AppErrorOptions = {},
  ) {
    super(options.message ?? code, { cause: options.cause });
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    this.errors = options.errors;
    this.details = options.details;
  }

  static missingFields(fields: string[]): AppError {
    return new AppError('missing_fields', {
      errors: fields.map((field) => ({ field, problem: 'required' })),
    });
  }

  static badRequest(errors: FieldProblem[], code: ErrorCode = 'bad_request'): AppError {
    return new AppError(code, { errors });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/**
 * Finds the AppError a library wrapped (GraphQLError.originalError, cause chains). A database error never
 * reaches a client as a 500 that shows the SQL: it answers what its SQLSTATE means to the caller.
 */
export function findAppError(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current instanceof AppError) return current;
    const fromDatabase = databaseRefusal(current);
    if (fromDatabase) return fromDatabase;
    const next =
      (current as { originalError?: unknown; cause?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
    current = next;
  }
  return undefined;
}

/**
 * By SQLSTATE class: 22, a value the checks missed (out of range, too long, invalid text) is the caller's to fix;
 * 23, a constraint another request's change now breaks, is a conflict; 40 (serialization failure, deadlock),
 * 08, 53 and 57 (connection lost, out of resources, cancelled or shut down) pass, and a retry succeeds.
 * pg's errors carry the SQLSTATE in `code` beside a `severity`; MikroORM's wrappers carry it as `sqlState`.
 */
function databaseRefusal(error: unknown): AppError | undefined {
  const e = error as { code?: unknown; severity?: unknown; sqlState?: unknown };
  const state = typeof e.sqlState === 'string' ? e.sqlState : typeof e.severity === 'string' ? e.code : undefined;
  if (typeof state !== 'string' || !/^[0-9A-Z]{5}$/.test(state)) return undefined;
  switch (state.slice(0, 2)) {
    case '22':
      return new AppError('bad_request', {
        errors: [{ field: 'input', problem: 'a value the service cannot store (too long, out of range or malformed)' }],
        cause: error,
      });
    case '23':
      return new AppError('conflict', { message: 'conflict', cause: error });
    case '40':
    case '08':
    case '53':
    case '57':
      return new AppError('service_unavailable', {
        errors: [{ field: 'request', problem: 'the database could not complete it now; retry shortly' }],
        cause: error,
      });
    default:
      return undefined;
  }
}
