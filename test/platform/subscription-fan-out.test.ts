/**
 * What keeps thousands of subscribers of one resource cheap (issue 37, the 5,000-client row): followers that come
 * together share one starting read (EventBus.follow) unless an event of the topic or a lost connection came between;
 * an event's answers go out over several turns of the event loop; a query is parsed and validated once.
 */
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishEvent } from '../../src/platform/events/event-bus';
import { prepareOperation } from '../../src/platform/graphql/prepare-operation';
import { DEFAULT_OPERATION_LIMITS } from '../../src/platform/graphql/operation-limits';
import { subscribeSharingResults } from '../../src/platform/graphql/shared-subscribe';
import { startTestApp, type TestApp } from '../helpers/app';

describe('followers of a topic', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const made = () => {
    let count = 0;
    return { make: () => ({ client_id: 'ord_1', made: ++count }), count: () => count };
  };

  it('share one starting event until an event of the topic arrives', async () => {
    const bus = app.services.events;
    const { make, count } = made();
    const first = bus.follow('fan-out:a', make);
    const second = bus.follow('fan-out:a', make);
    expect(second.start).toBe(first.start);
    expect(count()).toBe(1);
    // Another topic has a starting event of its own.
    expect(bus.follow('fan-out:b', make).start).not.toBe(first.start);

    await publishEvent(app.services.orm.em.fork(), 'fan-out:a', { client_id: 'ord_1' });
    const heard = await first.live.next();
    expect(heard.value).toEqual({ client_id: 'ord_1' });
    const third = bus.follow('fan-out:a', make);
    expect(third.start).not.toBe(first.start);
    // Every listener of the topic was given the same event object.
    expect((await second.live.next()).value).toBe(heard.value);
    for (const follower of [first, second, third]) await follower.live.return!();
  });

  it('do not share a starting event made before the connection was lost', async () => {
    const bus = app.services.events;
    const { make } = made();
    const before = bus.follow('fan-out:c', make);
    const connection = app.services.orm.em.fork().getConnection();
    const listeners = () =>
      connection.execute<{ pid: number }[]>(
        `select pid from pg_stat_activity where application_name = 'esign-events' and datname = current_database()`,
      );
    const [listening] = await listeners();
    await connection.execute('select pg_terminate_backend(?)', [listening!.pid]);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const now = await listeners();
      if (now.length > 0 && now.every((row) => row.pid !== listening!.pid)) break;
      if (Date.now() > deadline) throw new Error('the listener did not come back');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const after = bus.follow('fan-out:c', make);
    expect(after.start).not.toBe(before.start);
    await before.live.return!();
    await after.live.return!();
    expect(bus.subscriberCount('fan-out:c')).toBe(0);
  });
});

describe('one event for many subscribers', () => {
  it('reaches every one of them over several turns of the event loop', async () => {
    const listeners = new Set<(event: object) => void>();
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
      subscription: new GraphQLObjectType({
        name: 'Subscription',
        fields: {
          changed: {
            type: GraphQLInt,
            subscribe: () => {
              let waiting: ((step: IteratorResult<object>) => void) | undefined;
              listeners.add((event) => waiting?.({ done: false, value: event }));
              const iterator: AsyncIterableIterator<object> = {
                [Symbol.asyncIterator]: () => iterator,
                next: () => new Promise((resolve) => (waiting = resolve)),
                return: async () => ({ done: true, value: undefined }),
              };
              return iterator;
            },
            resolve: (event: { n: number }) => event.n,
          },
        },
      }),
    });
    const subscribers = 1_000;
    const document = parse('subscription { changed }');
    const iterators = (await Promise.all(
      Array.from({ length: subscribers }, () => subscribeSharingResults({ schema, document }, 'same')),
    )) as AsyncIterableIterator<ExecutionResult>[];
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    const turnOfEach: number[] = [];
    const answers = iterators.map((iterator) => iterator.next().then((step) => (turnOfEach.push(turns), step.value)));
    await new Promise((resolve) => setImmediate(resolve));
    const event = { n: 7 };
    for (const listener of listeners) listener(event);
    setImmediate(count);
    const results = await Promise.all(answers);
    counting = false;
    expect(results.every((result) => (result as ExecutionResult).data?.changed === 7)).toBe(true);
    // The first answers went out before the loop turned, the last ones several turns later.
    expect(turnOfEach[0]).toBe(0);
    expect(turnOfEach.at(-1)).toBeGreaterThanOrEqual(3);
    for (const iterator of iterators) await iterator.return!();
  });
});

describe('operations prepared for graphql-ws', () => {
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: { echo: { type: GraphQLString, args: { n: { type: GraphQLInt } }, resolve: () => 'ok' } },
    }),
  });
  const rules: never[] = [];

  it('parse and validate a query once, and still check the variables of each', () => {
    const query = 'query ($n: Int) { echo(n: $n) }';
    const first = prepareOperation(schema, rules, DEFAULT_OPERATION_LIMITS, { query, variables: { n: 1 } });
    const second = prepareOperation(schema, rules, DEFAULT_OPERATION_LIMITS, { query, variables: { n: 2 } });
    expect(Array.isArray(first) || Array.isArray(second)).toBe(false);
    expect(!Array.isArray(second) && second.document).toBe(!Array.isArray(first) && first.document);
    expect(!Array.isArray(second) && second.variableValues).toEqual({ n: 2 });
    const refused = prepareOperation(schema, rules, DEFAULT_OPERATION_LIMITS, { query, variables: { n: 'many' } });
    expect(Array.isArray(refused) && refused[0]!.extensions.code).toBe('bad_request');
  });

  it('refuse an invalid query every time it comes', () => {
    for (let round = 0; round < 2; round++) {
      const refused = prepareOperation(schema, rules, DEFAULT_OPERATION_LIMITS, { query: '{ nothing }' });
      expect(Array.isArray(refused) && refused[0]!.extensions.code).toBe('bad_request');
    }
  });
});
