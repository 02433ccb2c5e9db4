import { Kind, getOperationAST, type DocumentNode, type ValueNode } from 'graphql';
import type { FieldProblem } from '../errors';

/**
 * PostgreSQL cannot store NUL in text or jsonb at all, and the other C0 controls and DEL have no place in
 * anything this API takes, except tab, line feed and carriage return in free text (a reason, a description).
 */
const FORBIDDEN_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** Identifiers, codes, names and addresses are single-line: no control character at all. */
const FORBIDDEN_IN_IDENTIFIERS = /[\u0000-\u001f\u007f]/;
const IDENTIFIER_FIELD = /(^|_)(id|ids|code|name|email|mobile|folder|type|status|kind|key)$/;

const TEXT_PROBLEM = 'must not contain NUL or other control characters';
const IDENTIFIER_PROBLEM = 'must not contain control characters';

/** The last field name of a path such as `signers[0].full_name` or `stamp_ids[2]`. */
function fieldNameOf(path: string): string {
  return path.replace(/\[\d+\]$/, '').replace(/^.*\./, '');
}

function checkString(value: string, path: string, problems: FieldProblem[]): void {
  if (IDENTIFIER_FIELD.test(fieldNameOf(path))) {
    if (FORBIDDEN_IN_IDENTIFIERS.test(value)) problems.push({ field: path, problem: IDENTIFIER_PROBLEM });
  } else if (FORBIDDEN_IN_TEXT.test(value)) {
    problems.push({ field: path, problem: TEXT_PROBLEM });
  }
}

/**
 * Walks a JSON value (a REST body or query, GraphQL variables) and names every string, or object key, that
 * holds a character the service refuses. Depth is bounded by what JSON.parse and the body limit allow.
 */
export function findControlCharacters(value: unknown, path: string, problems: FieldProblem[] = []): FieldProblem[] {
  if (typeof value === 'string') {
    checkString(value, path, problems);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => findControlCharacters(item, `${path}[${index}]`, problems));
  } else if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    for (const [key, item] of Object.entries(value)) {
      const itemPath = path ? `${path}.${key}` : key;
      if (FORBIDDEN_IN_IDENTIFIERS.test(key))
        problems.push({ field: itemPath, problem: 'a key must not contain control characters' });
      else findControlCharacters(item, itemPath, problems);
    }
  }
  return problems;
}

/**
 * The same check for a GraphQL operation: every argument's value, whether written in the document or given
 * as a variable, named by the argument (`signers[0].full_name`) as the REST face names it.
 */
export function findControlCharactersInOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): FieldProblem[] {
  const operation = getOperationAST(document, operationName);
  if (!operation) return [];
  const problems: FieldProblem[] = [];
  const visitValue = (node: ValueNode, path: string): void => {
    switch (node.kind) {
      case Kind.VARIABLE:
        findControlCharacters(variables?.[node.name.value], path, problems);
        break;
      case Kind.STRING:
        checkString(node.value, path, problems);
        break;
      case Kind.LIST:
        node.values.forEach((item, index) => visitValue(item, `${path}[${index}]`));
        break;
      case Kind.OBJECT:
        for (const field of node.fields) visitValue(field.value, `${path}.${field.name.value}`);
        break;
      default:
        break;
    }
  };
  // Fragments are followed once each; arguments may sit at any depth of the selection.
  const fragments = new Map(
    document.definitions.flatMap((definition) =>
      definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [],
    ),
  );
  const visited = new Set<string>();
  const stack = [operation.selectionSet];
  while (stack.length > 0) {
    for (const selection of stack.pop()!.selections) {
      if (selection.kind === Kind.FIELD) {
        for (const argument of selection.arguments ?? []) visitValue(argument.value, argument.name.value);
        if (selection.selectionSet) stack.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) stack.push(fragment.selectionSet);
      }
    }
  }
  return problems;
}
