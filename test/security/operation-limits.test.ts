import 'reflect-metadata';
import { parse, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors';
import { buildAppSchema } from '../../src/platform/graphql/schema';
import { DEFAULT_OPERATION_LIMITS, checkOperationLimits, operationCost } from '../../src/platform/graphql/operation-limits';

/** The nested read of the benchmark (a page of sessions with signers, elements, assets and stamps). */
const NESTED_PAGE = `query Page($size: Int!) {
  esignSessions(page: 1, size: $size) {
    items {
      client_id status
      signers { signer_id elements { field_id asset { client_id } } }
      stamps { stamp_id order { client_id } pdf_file { client_id } }
      source_file { client_id }
    }
  }
}`;

describe('operation cost: a list costs its page size or its declared maximum times its selection', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildAppSchema();
  });
  const cost = (query: string, variables: Record<string, unknown> = {}) =>
    operationCost(schema, parse(query), undefined, variables);

  it('counts a page by its size and each nested list by its bound', () => {
    // 1 (me) + 2 scalars.
    expect(cost('{ me { user_id email } }')).toBe(3);
    // files(size) multiplies the page: 1 + 10 x (1 items + 10 ... ) -- a page of 10 files with 2 fields each.
    const tenFiles = cost('{ files(page: 1, size: 10) { items { client_id name } has_next } }');
    const twentyFiles = cost('{ files { items { client_id name } has_next } }');
    expect(twentyFiles).toBeGreaterThan(tenFiles);
    expect(cost('query F($n: Int!) { files(page: 1, size: $n) { items { client_id } } }', { n: 10 })).toBeLessThan(
      cost('query F($n: Int!) { files(page: 1, size: $n) { items { client_id } } }', { n: 100 }),
    );
    // A session's signers count 50 (the most a session can have), elements 50 each.
    const signers = cost('{ esignSession(client_id: "esign_x") { signers { signer_id } } }');
    const elements = cost('{ esignSession(client_id: "esign_x") { signers { signer_id elements { field_id } } } }');
    expect(signers).toBe(1 + 1 + 50 * 1);
    expect(elements).toBe(1 + 1 + 50 * (1 + 1 + 50 * 1));
  });

  it('an order’s stamps count 5000 unpaged and their page size when paged', () => {
    const unpaged = cost('{ stampOrder(client_id: "stamp_x") { stamps { stamp_id } } }');
    const paged = cost('{ stampOrder(client_id: "stamp_x") { stamps(page: 1, size: 10) { stamp_id } } }');
    expect(unpaged).toBe(1 + 1 + 5000 * 1);
    expect(paged).toBe(1 + 1 + 10 * 1);
  });

  it('accepts the benchmark’s nested page of 50 and refuses the nesting that multiplies 5000-stamp orders', () => {
    const nested = cost(NESTED_PAGE, { size: 50 });
    console.log(`nested page of 50 costs ${nested}; the limit is ${DEFAULT_OPERATION_LIMITS.maxCost}`);
    expect(nested).toBeLessThanOrEqual(DEFAULT_OPERATION_LIMITS.maxCost);
    const bomb = '{ stampOrder(client_id: "stamp_x") { stamps { order { stamps { order { stamps { stamp_id } } } } } } }';
    expect(cost(bomb)).toBeGreaterThan(1e9);
    let refusal: AppError | undefined;
    try {
      checkOperationLimits(schema, parse(bomb), undefined, {}, DEFAULT_OPERATION_LIMITS);
    } catch (error) {
      refusal = error as AppError;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'query_too_complex', status: 400 });
    expect(refusal!.details).toEqual({ cost: cost(bomb), limit: DEFAULT_OPERATION_LIMITS.maxCost });
  });

  it('refuses more aliases than the limit, counted through fragments', () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: me { user_id }`).join(' ')} }`;
    expect(() => checkOperationLimits(schema, parse(aliases(30)), undefined, {}, DEFAULT_OPERATION_LIMITS)).not.toThrow();
    expect(() => checkOperationLimits(schema, parse(aliases(31)), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex', details: { aliases_limit: 30 } }),
    );
    const viaFragment = `fragment F on Me { ${Array.from({ length: 31 }, (_, i) => `b${i}: user_id`).join(' ')} } { me { ...F } }`;
    expect(() => checkOperationLimits(schema, parse(viaFragment), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex' }),
    );
  });

  it('stops weighing documents whose fragments spread into each other beyond measure', () => {
    const fragments = Array.from({ length: 24 }, (_, i) => `fragment F${i} on Me { user_id ...F${i + 1} ...F${i + 1} }`);
    fragments.push('fragment F24 on Me { email }');
    const query = `${fragments.join('\n')}\n{ me { ...F0 } }`;
    expect(() => checkOperationLimits(schema, parse(query), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex' }),
    );
  });
});
