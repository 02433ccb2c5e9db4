import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  coerceInputValue,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLInputType,
  type GraphQLLeafType,
} from 'graphql';
import type { FieldProblem } from '../errors';

/**
 * REST clients send JSON, not GraphQL: a refused value is named by its field path (`signers[0].elements[1].page`)
 * and described in the service's words ("must be a string"), never in graphql-js's ("String cannot represent a
 * non string value: 200"). One walk for every route, driven by the argument's GraphQL input type.
 */

const INT_RANGE = 'from -2147483648 to 2147483647';

/** What a leaf (scalar or enum) of this type must be, in the words every REST error uses. */
function leafProblem(type: GraphQLLeafType, value: unknown, scalarMessage: string): string {
  if (isEnumType(type))
    return `must be one of: ${type
      .getValues()
      .map((entry) => entry.name)
      .join(', ')}`;
  if (type === GraphQLString || type === GraphQLID) return 'must be a string';
  if (type === GraphQLInt)
    return typeof value === 'number' && Number.isInteger(value)
      ? `must be a whole number ${INT_RANGE}`
      : 'must be a whole number';
  if (type === GraphQLFloat) return 'must be a number';
  if (type === GraphQLBoolean) return 'must be true or false';
  if (type.name === 'DateTimeISO') return 'must be a date and time in ISO 8601 (2026-11-26T10:00:00Z)';
  // The service's own scalars (Rupees) already speak this language.
  return scalarMessage.startsWith('must ') ? scalarMessage : `must be a valid ${type.name}`;
}

/**
 * Every problem of `value` against `type`, named from `path`. Stricter than GraphQL's input coercion in one way:
 * a list wants a JSON array (GraphQL would take a lone object as a list of one; a REST client that sent an object
 * where the contract has an array has made a mistake worth naming).
 */
export function inputProblems(
  value: unknown,
  type: GraphQLInputType,
  path: string,
  problems: FieldProblem[] = [],
): FieldProblem[] {
  if (isNonNullType(type)) {
    if (value === null || value === undefined)
      problems.push({ field: path, problem: /\]$/.test(path) ? 'must not be null' : 'required' });
    else inputProblems(value, type.ofType, path, problems);
    return problems;
  }
  if (value === null || value === undefined) return problems;
  if (isListType(type)) {
    if (!Array.isArray(value)) problems.push({ field: path, problem: 'must be an array' });
    else value.forEach((item, index) => inputProblems(item, type.ofType, `${path}[${index}]`, problems));
    return problems;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push({ field: path, problem: 'must be an object' });
      return problems;
    }
    const fields = type.getFields();
    const given = value as Record<string, unknown>;
    for (const key of Object.keys(given))
      if (!Object.hasOwn(fields, key)) problems.push({ field: `${path}.${key}`, problem: 'unknown field' });
    for (const field of Object.values(fields)) {
      if (given[field.name] === undefined && field.defaultValue !== undefined) continue;
      inputProblems(given[field.name], field.type, `${path}.${field.name}`, problems);
    }
    return problems;
  }
  let refusal: string | undefined;
  coerceInputValue(value, type, (_path, _invalid, error) => {
    refusal ??= error.message;
  });
  if (refusal !== undefined) problems.push({ field: path, problem: leafProblem(type, value, refusal) });
  return problems;
}

/** graphql-js's coercion messages, as the service words them (for the few that reach REST past the walk above). */
const PLAIN: [RegExp, string][] = [
  [/^(String|ID) cannot represent/, 'must be a string'],
  [/^Int cannot represent non 32-bit/, `must be a whole number ${INT_RANGE}`],
  [/^Int cannot represent/, 'must be a whole number'],
  [/^Float cannot represent/, 'must be a number'],
  [/^Boolean cannot represent/, 'must be true or false'],
  [/^Value .* does not exist in "\w+" enum/, 'must be one of the documented values'],
  [/^Expected type "\w+" to be an object/, 'must be an object'],
  [/^Expected non-nullable type .* not to be null/, 'must not be null'],
];

/**
 * A graphql-js variable refusal (`Variable "$stamp" got invalid value 200 at "stamp.amount"; String cannot represent
 * a non string value: 200`) as a field problem: the path it names and a plain problem.
 */
export function plainVariableProblem(message: string): FieldProblem | undefined {
  const match = /^Variable "\$(\w+)" got invalid value .*?(?: at "([^"]+)")?; (.*)$/s.exec(message);
  if (!match) return undefined;
  const field = match[2] ?? match[1]!;
  const detail = match[3]!;
  const unknown = /^Field "(\w+)" is not defined by type/.exec(detail);
  if (unknown) return { field: `${field}.${unknown[1]}`, problem: 'unknown field' };
  const missing = /^Field "(\w+)" of required type ".*" was not provided/.exec(detail);
  if (missing) return { field: `${field}.${missing[1]}`, problem: 'required' };
  const plain = PLAIN.find(([pattern]) => pattern.test(detail));
  if (plain) return { field, problem: plain[1] };
  return { field, problem: detail.startsWith('must ') ? detail : 'has the wrong type' };
}
