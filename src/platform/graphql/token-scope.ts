import {
  getArgumentValues,
  getOperationAST,
  GraphQLError,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { Extensions } from 'type-graphql';
import type { Actor } from '../auth/actor';
import { scopesNeeded, type FieldDomain, type OperationKind } from '../auth/token-scopes';
import { AppError } from '../errors';

/** The part of the API a root field belongs to (token-scopes.ts): which token scopes may run it. */
export const TokenScope = (domain: FieldDomain) => Extensions({ tokenScope: domain });

/**
 * A root field a browser token may run, for its one resource: the argument `argument` must be that resource's id;
 * another id reads as absent (`notFound`: the error the field answers for another user's resource).
 */
export const BrowserReadable = (notFound: () => AppError, argument = 'client_id') =>
  Extensions({ browserResource: { argument, notFound } });

/** A field that carries a credential (a signer's token or link): never shown to a browser token. */
export const Credential = () => Extensions({ credential: true });

interface OperationArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/**
 * Refuses, before anything runs, an operation the token may not run: a root field outside its scopes (`403
 * forbidden` naming the scopes that would allow it); for a browser token, any root field but its resource's reads and
 * subscriptions (`403`), another resource (`404`, as another user's) and any credential field (`403`).
 */
export function refuseOutOfScope(args: OperationArgs, actor: Actor): GraphQLError[] | undefined {
  if (!actor.scopes && !actor.resourceId) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  const root = operation && args.schema.getRootType(operation.operation);
  if (!operation || !root) return undefined;
  const kind = operation.operation as OperationKind;
  const fields = root.getFields();
  for (const node of rootFields(args.document, operation.selectionSet)) {
    const field = fields[node.name.value];
    if (!field) continue;
    const name = `${root.name}.${field.name}`;
    const error = actor.resourceId
      ? browserRefusal(actor.resourceId, field, node, name, args.variableValues)
      : scopeRefusal(actor, field, name, kind);
    if (error) return [new GraphQLError(error.message, { originalError: error })];
  }
  if (actor.resourceId) {
    const credential = credentialSelected(args.schema, args.document);
    if (credential)
      return [
        new GraphQLError('forbidden', {
          originalError: new AppError('forbidden', {
            errors: [{ field: credential, problem: 'a credential: a browser token never reads it' }],
          }),
        }),
      ];
  }
  return undefined;
}

/**
 * The same refusal for a REST route served beside GraphQL's execution (a multipart upload, a CSV answer), by the root
 * field the route stands for; thrown before the route reads its body.
 */
export function refuseRouteOutOfScope(schema: GraphQLSchema, operation: `${'Query' | 'Mutation'}.${string}`, actor: Actor): void {
  if (!actor.scopes && !actor.resourceId) return;
  const [type, name] = operation.split('.') as ['Query' | 'Mutation', string];
  const field = (type === 'Query' ? schema.getQueryType() : schema.getMutationType())?.getFields()[name];
  if (!field) return;
  // (A browser token's resource argument is checked when the operation runs.)
  const error = actor.resourceId
    ? browserRefusal(actor.resourceId, field, null, operation, null)
    : scopeRefusal(actor, field, operation, type === 'Query' ? 'query' : 'mutation');
  if (error) throw error;
}

function scopeRefusal(actor: Actor, field: GraphQLField<unknown, unknown>, name: string, kind: OperationKind): AppError | null {
  const domain = (field.extensions.tokenScope as FieldDomain | undefined) ?? 'account';
  const needed = scopesNeeded(actor.scopes, domain, kind);
  if (!needed) return null;
  return new AppError('forbidden', {
    errors: [
      {
        field: 'scope',
        problem: `${name} needs a token with scope ${needed.join(' or ')}; this token has ${actor.scopes!.join(', ') || 'none'}`,
      },
    ],
  });
}

function browserRefusal(
  resourceId: string,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode | null,
  name: string,
  variables: Record<string, unknown> | null | undefined,
): AppError | null {
  const readable = field.extensions.browserResource as { argument: string; notFound: () => AppError } | undefined;
  if (!readable)
    return new AppError('forbidden', {
      errors: [{ field: 'scope', problem: `${name}: a browser token only reads and follows its one resource` }],
    });
  if (!node) return null;
  let asked: unknown;
  try {
    asked = getArgumentValues(field, node, variables ?? {})[readable.argument];
  } catch {
    return null; // bad arguments: execution refuses them with its own error
  }
  return asked === resourceId ? null : readable.notFound();
}

/** The root fields an operation selects, through its fragments. */
function rootFields(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): FieldNode[] {
  return selectionSet.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__') ? [] : [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFields(document, selection.selectionSet, seen);
    const name = selection.name.value;
    if (seen.has(name)) return [];
    seen.add(name);
    const fragment = document.definitions.find(
      (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === name,
    );
    return fragment && fragment.kind === Kind.FRAGMENT_DEFINITION ? rootFields(document, fragment.selectionSet, seen) : [];
  });
}

/** The first credential field the document selects anywhere (`SignerType.token`), or null. */
function credentialSelected(schema: GraphQLSchema, document: DocumentNode): string | null {
  const typeInfo = new TypeInfo(schema);
  let found: string | null = null;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const field = typeInfo.getFieldDef();
        if (!found && field?.extensions.credential) found = `${typeInfo.getParentType()?.name}.${field.name}`;
      },
    }),
  );
  return found;
}
