/**
 * REST refusals of values of the wrong type (issue 29) name the field and say what it must be in the service's own
 * words, on every route alike: never graphql-js's "String cannot represent a non string value: 200".
 */
import { buildSchema, graphql } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainVariableProblem } from '../../src/platform/rest/plain-problems';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';

describe('REST: values of the wrong type', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => app?.close());

  const cases: {
    name: string;
    method: string;
    path: string;
    json?: unknown;
    query?: Record<string, string>;
    errors: unknown[];
  }[] = [
    {
      name: 'a number for a string',
      method: 'POST',
      path: '/esign/initialize-esign',
      json: { sign_type: 'suresign', stamp: { amount: 200, state_code: 'MH', article_id: 'MH-5' } },
      errors: [{ field: 'stamp.amount', problem: 'must be a string' }],
    },
    {
      name: 'strings for a number and for booleans, deep in a list',
      method: 'POST',
      path: '/esign/initialize-esign',
      json: {
        signers: [
          { full_name: 'A', max_retry: '3', verify_email: 'yes' },
          { full_name: 'B', name_match: 1 },
        ],
      },
      errors: [
        { field: 'signers[0].max_retry', problem: 'must be a whole number' },
        { field: 'signers[0].verify_email', problem: 'must be true or false' },
        { field: 'signers[1].name_match', problem: 'must be true or false' },
      ],
    },
    {
      name: 'an object for an array, and an array for an object',
      method: 'POST',
      path: '/esign/initialize-esign',
      json: { signers: { full_name: 'A' }, stamp: [{ amount: '100' }] },
      errors: [
        { field: 'signers', problem: 'must be an array' },
        { field: 'stamp', problem: 'must be an object' },
      ],
    },
    {
      name: 'null where a value is required, and a field that does not exist',
      method: 'POST',
      path: '/esign/initialize-esign',
      json: { signers: [{ full_name: 'A', elements: [null], nickname: 'x' }] },
      errors: [
        { field: 'signers[0].nickname', problem: 'unknown field' },
        { field: 'signers[0].elements[0]', problem: 'must not be null' },
      ],
    },
    {
      name: 'a string for a whole number, a boolean for rupees, an object for a boolean',
      method: 'POST',
      path: '/stamps/create-order',
      json: { quantity: 'ten', stamp_duty_amount: true, mock: { yes: true } },
      errors: [
        { field: 'stamp_duty_amount', problem: 'must be a number' },
        { field: 'quantity', problem: 'must be a whole number' },
        { field: 'mock', problem: 'must be true or false' },
      ],
    },
    {
      name: 'a whole number out of range',
      method: 'POST',
      path: '/stamps/create-order',
      json: { quantity: 3_000_000_000 },
      errors: [{ field: 'quantity', problem: 'must be a whole number from -2147483648 to 2147483647' }],
    },
    {
      name: 'an object for a list, on another module’s route',
      method: 'POST',
      path: '/webhooks/create',
      json: { url: 'https://93.184.215.14/hook', events: { all: true } },
      errors: [{ field: 'events', problem: 'must be an array' }],
    },
    {
      name: 'text for a number in a query string',
      method: 'GET',
      path: '/esign/list',
      query: { page: 'first', size: '10' },
      errors: [{ field: 'page', problem: 'must be a whole number' }],
    },
    {
      name: 'a number for an id',
      method: 'POST',
      path: '/esign/cancel',
      json: { client_id: 42 },
      errors: [{ field: 'client_id', problem: 'must be a string' }],
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.method} ${testCase.path}: ${testCase.name}`, async () => {
      const response = await rest(app, testCase.method, testCase.path, {
        token: owner.token,
        ...(testCase.json !== undefined ? { json: testCase.json } : {}),
        ...(testCase.query ? { query: testCase.query } : {}),
      });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toMatchObject({ data: null, status_code: 400, message: 'bad_request', success: false });
      expect(response.body.errors).toEqual(expect.arrayContaining(testCase.errors as never[]));
      expect(response.body.errors).toHaveLength(testCase.errors.length);
      expect(JSON.stringify(response.body)).not.toMatch(/cannot represent|Expected type|not defined by type|non-nullable/);
    });
  }

  it('a null for a required argument is reported as missing, as before', async () => {
    const response = await rest(app, 'GET', '/esign/details', { token: owner.token });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'client_id', problem: 'required' }]);
  });

  it('graphql-js’s own variable refusals are reworded the same way', async () => {
    const schema = buildSchema(`
      input Stamp { amount: String, ids: [String!], nested: Inner }
      input Inner { count: Int! }
      type Query { echo(stamp: Stamp, n: Int, flag: Boolean): String }
    `);
    const refusal = async (variables: Record<string, unknown>) => {
      const result = await graphql({
        schema,
        source: 'query ($stamp: Stamp, $n: Int, $flag: Boolean) { echo(stamp: $stamp, n: $n, flag: $flag) }',
        variableValues: variables,
      });
      return plainVariableProblem(result.errors![0]!.message);
    };
    expect(await refusal({ stamp: { amount: 200 } })).toEqual({ field: 'stamp.amount', problem: 'must be a string' });
    expect(await refusal({ stamp: { ids: [null] } })).toEqual({ field: 'stamp.ids[0]', problem: 'must not be null' });
    expect(await refusal({ stamp: { nested: {} } })).toEqual({ field: 'stamp.nested.count', problem: 'required' });
    expect(await refusal({ stamp: { colour: 'red' } })).toEqual({ field: 'stamp.colour', problem: 'unknown field' });
    expect(await refusal({ stamp: 'x' })).toEqual({ field: 'stamp', problem: 'must be an object' });
    expect(await refusal({ n: 'seven' })).toEqual({ field: 'n', problem: 'must be a whole number' });
    expect(await refusal({ flag: 'yes' })).toEqual({ field: 'flag', problem: 'must be true or false' });
  });
});
