import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { AppError } from '../errors';
import { isServiceCode } from './format-error';
import { asGraphQLError, checkOperationLimits, type OperationLimits } from './operation-limits';

export interface OperationRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export interface PreparedOperation {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/**
 * What Apollo's pipeline checks before it executes (syntax within the token limit, validation with our rules,
 * which operation, variables, then the operation limits), for graphql-ws, which would otherwise parse unguarded (a syntax error closed the whole socket
 * with 4500) and send rule errors without a code (`internal_error`). Each refusal carries the code HTTP
 * gives the same document: a rule's own service code, `bad_request` otherwise. graphql-ws answers them
 * with an `error` message for that operation only; the socket and its other operations go on.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  rules: readonly ValidationRule[],
  limits: OperationLimits,
  request: OperationRequest,
): PreparedOperation | GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(request.query, { maxTokens: limits.maxTokens });
  } catch (error) {
    if (error instanceof GraphQLError) return [refusal(error)];
    throw error;
  }
  const invalid = validate(schema, document, [...specifiedRules, ...rules]);
  if (invalid.length > 0) return invalid.map(refusal);
  const operation = getOperationAST(document, request.operationName);
  if (!operation) {
    const message = request.operationName
      ? `Unknown operation named "${request.operationName}".`
      : 'Must provide operation name if query contains multiple operations.';
    return [new GraphQLError(message, { extensions: { code: 'bad_request' } })];
  }
  // Checked here only, so that a refused variable is an `error` message as it is a 400 over HTTP; execution
  // coerces the raw values again (coercing coerced values is not safe for every scalar).
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 50 });
  if (coerced.errors) return coerced.errors.map(refusal);
  try {
    checkOperationLimits(schema, document, request.operationName, request.variables, limits);
  } catch (error) {
    if (error instanceof AppError) return [asGraphQLError(error)];
    throw error;
  }
  return { document, operationName: request.operationName, variableValues: request.variables };
}

function refusal(error: GraphQLError): GraphQLError {
  const code = error.extensions.code;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    originalError: error.originalError,
    extensions: { ...error.extensions, code: isServiceCode(code) ? code : 'bad_request' },
  });
}
