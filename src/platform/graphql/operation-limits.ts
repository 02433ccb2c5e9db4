import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import {
  GraphQLError,
  Kind,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isListType,
  validate,
  visit,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { Extensions } from 'type-graphql';
import { AppError } from '../errors';

/** What one GraphQL operation may ask for; the same on HTTP and graphql-ws (documented in docs/api.md, Limits). */
export interface OperationLimits {
  /** The operation's cost (see costEstimator) may not exceed this. */
  maxCost: number;
  /** Aliased fields in one operation, fragments included. */
  maxAliases: number;
  /** Lexical tokens in one document: graphql-js stops parsing beyond it (Apollo's and graphql-ws's parse both use it). */
  maxTokens: number;
}

export const DEFAULT_OPERATION_LIMITS: OperationLimits = { maxCost: 1_000_000, maxAliases: 30, maxTokens: 5_000 };

/** A list field that declares no bound counts as this many items. */
const UNDECLARED_LIST_ITEMS = 100;

/**
 * Declares the most items a list field can hold (a business limit: signers per session, elements per signer),
 * so that the operation's cost counts the worst case of what it can return.
 */
export const MaxItems = (items: number) => Extensions({ maxItems: items });

/** A page's `items`: the page field's `size` already multiplied what they cost. */
export const PageItems = () => Extensions({ maxItems: 1 });

/**
 * Every field costs 1; a field with a `size` argument (a page) costs its size times its selection; any other list
 * of objects costs its declared maximum (MaxItems) times its selection. So the cost bounds how many fields the
 * answer can hold: `stamps { order { stamps } }` on orders of up to 5000 stamps is refused before it runs.
 * graphql-query-complexity walks the document (fragments, @include/@skip, variables); this is its estimator.
 */
const costEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  // Introspection answers from the schema itself, bounded by its size and the depth limit; weighing its lists at
  // 100 items each would refuse the standard introspection query every GraphQL tool sends.
  if (type.name.startsWith('__') || field.name.startsWith('__')) return childComplexity;
  if (typeof args.size === 'number') return 1 + Math.max(0, args.size) * childComplexity;
  if (!isListType(getNullableType(field.type)) || childComplexity === 0) return 1 + childComplexity;
  const declared = field.extensions?.maxItems;
  return 1 + (typeof declared === 'number' ? declared : UNDECLARED_LIST_ITEMS) * childComplexity;
};

/**
 * The variables a document's cost depends on: those given as a `size` argument or to @include/@skip. The
 * session details read takes its id as a variable, and its cost does not depend on it: weighed once.
 */
const costVariablesOf = new WeakMap<DocumentNode, string[]>();

function costVariables(document: DocumentNode): string[] {
  let names = costVariablesOf.get(document);
  if (!names) {
    const found = new Set<string>();
    visit(document, {
      Argument(node, _key, parent) {
        const inDirective = (parent as { kind?: string } | undefined)?.kind === Kind.DIRECTIVE;
        if (node.name.value !== 'size' && !inDirective) return;
        visit(node.value, {
          Variable(variable) {
            found.add(variable.name.value);
          },
        });
      },
    });
    names = [...found].sort();
    costVariablesOf.set(document, names);
  }
  return names;
}

/** Weighed documents: by operation name and the values of the variables the cost depends on. */
const costs = new WeakMap<DocumentNode, Map<string, number>>();
const COSTS_PER_DOCUMENT = 64;

export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): number {
  const key = JSON.stringify([operationName ?? '', costVariables(document).map((name) => variables?.[name] ?? null)]);
  let byKey = costs.get(document);
  const cached = byKey?.get(key);
  if (cached !== undefined) return cached;
  // Variables that execution will refuse cannot be weighed; the refusal is theirs (bad_request), not a cost.
  const variableDefinitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  if (variableDefinitions.length > 0 && getVariableValues(schema, variableDefinitions, variables ?? {}).errors) return 0;
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [costEstimator],
      // Fragments spread into each other multiply the walk itself: its node count is bounded too.
      maxQueryNodes: 20_000,
    });
  } catch {
    // Only the node bound gets here (the variables were coerced above): too big to weigh is too big.
    cost = Number.POSITIVE_INFINITY;
  }
  if (!byKey) costs.set(document, (byKey = new Map()));
  if (byKey.size >= COSTS_PER_DOCUMENT) byKey.clear();
  byKey.set(key, cost);
  return cost;
}

const aliasVerdicts = new WeakMap<DocumentNode, Map<number, boolean>>();

/** graphql-armor's rule reports through the validation context, and throws when it is told to propagate. */
function tooManyAliases(schema: GraphQLSchema, document: DocumentNode, limit: number): boolean {
  let byLimit = aliasVerdicts.get(document);
  const known = byLimit?.get(limit);
  if (known !== undefined) return known;
  let tooMany: boolean;
  try {
    tooMany = validate(schema, document, [maxAliasesRule({ n: limit })]).length > 0;
  } catch {
    tooMany = true;
  }
  if (!byLimit) aliasVerdicts.set(document, (byLimit = new Map()));
  byLimit.set(limit, tooMany);
  return tooMany;
}

/**
 * Refuses an operation over the limits with `400 query_too_complex`, naming what was counted and the limit, before
 * anything executes. Called by both transports after validation, with the operation's variables.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  limits: OperationLimits,
): void {
  if (tooManyAliases(schema, document, limits.maxAliases)) {
    throw new AppError('query_too_complex', {
      errors: [{ field: 'query', problem: `more than ${limits.maxAliases} aliases` }],
      details: { aliases_limit: limits.maxAliases },
    });
  }
  const cost = operationCost(schema, document, operationName, variables);
  if (cost > limits.maxCost) {
    throw new AppError('query_too_complex', {
      errors: [{ field: 'query', problem: `cost ${Number.isFinite(cost) ? cost : 'beyond measure'} exceeds ${limits.maxCost}` }],
      details: { cost: Number.isFinite(cost) ? cost : null, limit: limits.maxCost },
    });
  }
}

/** The refusal as a GraphQL error whose original error is the AppError, so both transports format it alike. */
export function asGraphQLError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, { originalError: error, extensions: { http: { status: error.status } } });
}

/**
 * Apollo's part: each operation is weighed once Apollo has parsed and validated it and knows which operation
 * runs (its variables as sent), before anything executes.
 */
export function operationLimitsPlugin(limits: OperationLimits): ApolloServerPlugin<BaseContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operationName, request }) {
          try {
            checkOperationLimits(schema, document, operationName, request.variables, limits);
          } catch (error) {
            throw error instanceof AppError ? asGraphQLError(error) : error;
          }
        },
      };
    },
  };
}
