import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLInt,
  getNamedType,
  isListType,
  getNullableType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { AppError, type FieldProblem } from '../errors';
import { inputProblems } from './plain-problems';
import type { RestRoute } from './route';

export function routeArguments(schema: GraphQLSchema, route: RestRoute): readonly GraphQLArgument[] {
  const [kind, field] = route.operation.split('.');
  const root = kind === 'Query' ? schema.getQueryType() : schema.getMutationType();
  return root?.getFields()[field]?.args ?? [];
}

/** Query strings carry only text: read numbers and booleans out of it, strictly. */
function fromQueryText(value: unknown, type: GraphQLInputType): unknown {
  // `?status=a` is a list of one, as `?status=a&status=b` is a list of two.
  if (isListType(getNullableType(type))) return typeof value === 'string' ? [value] : value;
  if (typeof value !== 'string') return value;
  const named = getNamedType(type);
  if (named === GraphQLInt) return /^[+-]?\d+$/.test(value) ? Number(value) : value;
  if (named === GraphQLFloat) return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value) ? Number(value) : value;
  if (named === GraphQLBoolean) return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

/**
 * SOFA turns REST values into GraphQL variables with output conversions, which accept nearly anything
 * (`"yes"` becomes `false`, `"1"` becomes 1). Every given argument is checked here first against its GraphQL
 * input type (leaves with GraphQL's own coercion), so a value of the wrong type is `400 bad_request` naming the
 * field in the service's words (`stamp.amount`: "must be a string"), and never reinterpreted.
 * Absent and null arguments are left to the service, which reports them as missing. Text with NUL or other
 * control characters is refused by the shared executor (executeOperation), for both faces alike.
 */
export function checkArguments(
  args: readonly GraphQLArgument[],
  source: Record<string, unknown>,
  fromQueryString: boolean,
): void {
  const problems: FieldProblem[] = [];
  for (const arg of args) {
    const given = source[arg.name];
    if (given === undefined || given === null) continue;
    inputProblems(fromQueryString ? fromQueryText(given, arg.type) : given, arg.type, arg.name, problems);
  }
  if (problems.length > 0) throw AppError.badRequest(problems);
}
