import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { findAppError } from '../errors';
import type { Logger } from '../logger';

/**
 * AppErrors show their code (and field problems) in `extensions`; GraphQL's own validation errors keep
 * their text; anything else is a fault of ours: logged in full, shown as `internal_error` only.
 */
export function formatGraphQLError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const appError = findAppError(unwrapResolverError(error));
    if (appError) {
      return {
        message: appError.message,
        path: formatted.path,
        locations: formatted.locations,
        extensions: { code: appError.code, status: appError.status, ...(appError.errors ? { errors: appError.errors } : {}) },
      };
    }
    const code = formatted.extensions?.code;
    if (code && code !== 'INTERNAL_SERVER_ERROR') {
      return { ...formatted, extensions: { code, status: 400 } };
    }
    log.error({ err: unwrapResolverError(error) }, 'unexpected error in a GraphQL operation');
    return { message: 'internal_error', path: formatted.path, extensions: { code: 'internal_error', status: 500 } };
  };
}
