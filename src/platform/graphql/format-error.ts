import type { NextFunction, Request, Response } from 'express';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { AppError, ERROR_STATUS, findAppError, type ErrorCode } from '../errors';
import type { Logger } from '../logger';

/**
 * Apollo's automatic persisted queries signals are not refusals: Apollo answers them with HTTP 200 so that a client
 * registers the query and retries. Clients match them exactly (Apollo Client's link on the code
 * `PERSISTED_QUERY_NOT_FOUND` or the message `PersistedQueryNotFound`; Apollo Kotlin and iOS, urql on the same), so
 * both are kept as Apollo writes them: the one exception to the service's lowercase codes.
 */
const PERSISTED_QUERY_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** Apollo's codes for requests it refused before executing: all the client's doing, all `bad_request`. */
const APOLLO_REFUSALS = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

export interface ServiceCode {
  code: string;
  status: number;
}

export function isServiceCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}

/** The table's code for a refusal that only says its HTTP status (Apollo's heads, body-parser, multipart). */
function codeForStatus(status: number): ServiceCode {
  const code = (['method_not_allowed', 'payload_too_large', 'unsupported_media_type'] as const).find(
    (candidate) => ERROR_STATUS[candidate] === status,
  );
  return code ? { code, status } : { code: 'bad_request', status: ERROR_STATUS.bad_request };
}

function apolloHttpStatus(error: unknown): number | undefined {
  const status = (error as GraphQLError | undefined)?.extensions?.http as { status?: unknown } | undefined;
  return typeof status?.status === 'number' ? status.status : undefined;
}

/**
 * The service's code for an error of the GraphQL layer itself (Apollo's pipeline, graphql-js, our validation
 * rules), or undefined when it is a fault of ours. Over HTTP Apollo hides a validation rule's own code under
 * GRAPHQL_VALIDATION_FAILED; it is read back from the original error, so a rule's code is the same on both
 * transports.
 */
export function serviceCodeOf(code: unknown, error: unknown): ServiceCode | undefined {
  if (isServiceCode(code)) return { code, status: ERROR_STATUS[code] };
  if (typeof code === 'string' && PERSISTED_QUERY_CODES.has(code)) return { code, status: apolloHttpStatus(error) ?? 200 };
  if (code === 'GRAPHQL_VALIDATION_FAILED') {
    const ruleError = (error as GraphQLError).originalError as GraphQLError | undefined;
    const ruleCode = ruleError?.extensions?.code;
    if (isServiceCode(ruleCode)) return { code: ruleCode, status: ERROR_STATUS[ruleCode] };
  }
  const status = apolloHttpStatus(error);
  if (typeof code === 'string' && APOLLO_REFUSALS.has(code)) return codeForStatus(status ?? 400);
  // Apollo raises a few refusals with an HTTP head and no code at all (an APQ hash that does not match).
  if (status !== undefined && status >= 400 && status < 500) return codeForStatus(status);
  return undefined;
}

/** What a client reads of an AppError: its code and status, the inputs that failed, figures it can act on. */
function extensionsOf(error: AppError): Record<string, unknown> {
  return {
    code: error.code,
    status: error.status,
    ...(error.errors ? { errors: error.errors } : {}),
    ...(error.details ?? {}),
  };
}

/**
 * AppErrors show their code (and field problems) in `extensions`; refusals of the GraphQL layer get the
 * service's code for them (see serviceCodeOf) and keep their text; anything else is a fault of ours: logged in
 * full, shown as `internal_error` only. Both transports format with this, so a fault has one code on both.
 */
export function formatGraphQLError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const appError = findAppError(unwrapResolverError(error));
    if (appError) {
      return {
        message: appError.message,
        path: formatted.path,
        locations: formatted.locations,
        extensions: extensionsOf(appError),
      };
    }
    const known = serviceCodeOf(formatted.extensions?.code, error);
    if (known) {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { ...known } };
    }
    log.error({ err: unwrapResolverError(error) }, 'unexpected error in a GraphQL operation');
    return { message: 'internal_error', path: formatted.path, extensions: { code: 'internal_error', status: 500 } };
  };
}

/**
 * What goes wrong on `/graphql` before Apollo sees the request (unparseable or oversized JSON, a broken
 * multipart body, a failed token look-up) is answered as a GraphQL response too, not with the REST envelope:
 * a GraphQL client reads `errors[].extensions.code` whatever failed.
 */
export function graphqlHttpErrorHandler(log: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const refusal = findAppError(error) ?? refusalOfHttpError(error);
    if (!refusal) log.error({ err: error }, 'unexpected error');
    const answer = refusal ?? new AppError('internal_error');
    res.status(answer.status).json({
      errors: [
        {
          message: answer.message,
          extensions: extensionsOf(answer),
        },
      ],
    });
  };
}

/** body-parser and graphql-upload raise http-errors: a 4xx status, and a message meant for the client. */
function refusalOfHttpError(error: unknown): AppError | undefined {
  const e = error as { status?: unknown; type?: unknown; message?: unknown; expose?: unknown };
  if (typeof e?.status !== 'number' || e.status < 400 || e.status >= 500) return undefined;
  const { code } = codeForStatus(e.status);
  const problem = typeof e.type === 'string' ? e.type : e.expose && typeof e.message === 'string' ? e.message : undefined;
  return new AppError(code as ErrorCode, problem ? { errors: [{ field: 'body', problem }] } : {});
}
