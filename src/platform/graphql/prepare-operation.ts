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
  const document = validDocument(schema, rules, limits, request.query);
  if (Array.isArray(document)) return document;
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

/** Documents kept once valid, per schema and rules; a document longer than LONGEST_KEPT is checked every time. */
const DOCUMENTS_KEPT = 256;
const LONGEST_KEPT = 4096;
const validDocuments = new WeakMap<GraphQLSchema, WeakMap<readonly ValidationRule[], Map<string, DocumentNode>>>();

/**
 * The query parsed and validated, or why not. Thousands of clients subscribe with the same few queries, and the
 * checks cost a millisecond or more each: a valid one is kept by its text (graphql-js never changes a document, and
 * the operation limits' own caches are keyed on it). Variables are checked by the caller, every time.
 */
function validDocument(
  schema: GraphQLSchema,
  rules: readonly ValidationRule[],
  limits: OperationLimits,
  query: string,
): DocumentNode | GraphQLError[] {
  let bySchema = validDocuments.get(schema);
  if (!bySchema) validDocuments.set(schema, (bySchema = new WeakMap()));
  let kept = bySchema.get(rules);
  if (!kept) bySchema.set(rules, (kept = new Map()));
  const key = `${limits.maxTokens}:${query}`;
  const known = kept.get(key);
  if (known) {
    // Most recently used last: the oldest is the first to go.
    kept.delete(key);
    kept.set(key, known);
    return known;
  }
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: limits.maxTokens });
  } catch (error) {
    if (error instanceof GraphQLError) return [refusal(error)];
    throw error;
  }
  const invalid = validate(schema, document, [...specifiedRules, ...rules]);
  if (invalid.length > 0) return invalid.map(refusal);
  if (query.length <= LONGEST_KEPT) {
    if (kept.size >= DOCUMENTS_KEPT) kept.delete(kept.keys().next().value!);
    kept.set(key, document);
  }
  return document;
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
