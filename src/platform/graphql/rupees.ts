import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

/**
 * An amount of rupees as a client writes it: a JSON number (`2500`, `99.5`) or a decimal string (`"99.50"`).
 * The scalar only admits the two shapes; the use case parses the text with parseRupees (platform/money.ts), so
 * exponents, signs and a third decimal are refused there with the field's name, on both faces alike. A literal
 * keeps its digits as written (`99.50` stays `"99.50"`). Answers show rupees as strings, never as this scalar.
 */
export const RupeesScalar = new GraphQLScalarType<string | number, string | number>({
  name: 'Rupees',
  description: 'Rupees: a number (`2500`, `99.5`) or a decimal string (`"99.50"`), at most 2 decimals.',
  serialize: admit,
  // SOFA passes each REST value through `serialize` before GraphQL parses it (platform/rest/sofa.ts).
  parseValue: admit,
  parseLiteral(ast) {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT || ast.kind === Kind.STRING) return ast.value;
    throw new GraphQLError('must be rupees: a number or a decimal string', { nodes: ast });
  },
});

/** How the OpenAPI document describes it (SOFA's `customScalars`). */
export const RUPEES_JSON_SCHEMA = { oneOf: [{ type: 'number' }, { type: 'string' }], description: RupeesScalar.description };

function admit(value: unknown): string | number {
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new GraphQLError('must be rupees: a number or a decimal string');
}
