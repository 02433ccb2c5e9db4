import { Extensions } from 'type-graphql';

/**
 * Marks a field that GraphQL clients may select but that the REST face leaves out: nested objects
 * (files behind ids) that the contract's JSON does not have. SOFA selects every field of a type.
 */
export const GraphQLOnly = () => Extensions({ graphqlOnly: true });

export function isGraphQLOnly(extensions: Record<string, unknown> | null | undefined): boolean {
  return extensions?.graphqlOnly === true;
}
