import { describe, expect, it } from 'vitest';
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { subscribeSharingResults } from '../../src/platform/graphql/shared-subscribe';

/** A source that hands every subscriber the same event objects, as the event bus does. */
function broadcaster() {
  const listeners = new Set<(event: object) => void>();
  return {
    publish: (event: object) => listeners.forEach((listener) => listener(event)),
    subscribers: () => listeners.size,
    /** Like the bus's streams: return() ends a pending next() at once. */
    stream(): AsyncIterableIterator<object> {
      const queue: object[] = [];
      let waiting: ((step: IteratorResult<object>) => void) | undefined;
      const listener = (event: object) => {
        if (waiting) {
          waiting({ done: false, value: event });
          waiting = undefined;
        } else queue.push(event);
      };
      listeners.add(listener);
      const iterator: AsyncIterableIterator<object> = {
        [Symbol.asyncIterator]: () => iterator,
        next: () =>
          queue.length > 0
            ? Promise.resolve({ done: false, value: queue.shift()! })
            : new Promise((resolve) => (waiting = resolve)),
        return: async () => {
          listeners.delete(listener);
          waiting?.({ done: true, value: undefined });
          return { done: true, value: undefined };
        },
      };
      return iterator;
    },
  };
}

function setup() {
  const bus = broadcaster();
  let executions = 0;
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        changed: {
          type: GraphQLInt,
          args: { times: { type: GraphQLInt } },
          subscribe: () => bus.stream(),
          resolve: (event: { n: number }, args: { times: number }) => {
            executions += 1;
            return event.n * args.times;
          },
        },
      },
    }),
  });
  return { bus, schema, executions: () => executions };
}

describe('subscription results shared per event', () => {
  it('executes once per event for subscribers with the same key, separately for other keys', async () => {
    const { bus, schema, executions } = setup();
    const subscribe = (times: number, key: string) =>
      subscribeSharingResults({ schema, document: parse(`subscription { changed(times: ${times}) }`) }, key) as Promise<
        AsyncIterableIterator<ExecutionResult>
      >;
    const same = await Promise.all(Array.from({ length: 10 }, () => subscribe(2, 'owner-a:times-2')));
    const other = await subscribe(3, 'owner-b:times-3');
    const pending = [...same, other].map((iterator) => iterator.next());
    await new Promise((resolve) => setImmediate(resolve));
    bus.publish({ n: 7 });
    const results = await Promise.all(pending);
    expect(results.slice(0, 10).map((step) => step.value.data)).toEqual(Array(10).fill({ changed: 14 }));
    expect(results[10].value.data).toEqual({ changed: 21 });
    expect(executions()).toBe(2);

    // A later event is executed afresh.
    const next = [...same, other].map((iterator) => iterator.next());
    bus.publish({ n: 1 });
    expect((await Promise.all(next)).map((step) => step.value.data.changed)).toEqual([...Array(10).fill(2), 3]);
    expect(executions()).toBe(4);
  });

  it('lets go of the source at once when a subscriber leaves while waiting for an event', async () => {
    const { bus, schema } = setup();
    const iterator = (await subscribeSharingResults(
      { schema, document: parse('subscription { changed(times: 1) }') },
      'k',
    )) as AsyncIterableIterator<ExecutionResult>;
    const waiting = iterator.next();
    await new Promise((resolve) => setImmediate(resolve));
    expect(bus.subscribers()).toBe(1);
    await iterator.return!();
    expect(await waiting).toMatchObject({ done: true });
    expect(bus.subscribers()).toBe(0);
  });

  it('returns validation-time errors of the source as a result', async () => {
    const { schema } = setup();
    const result = await subscribeSharingResults({ schema, document: parse('subscription { changed(times: "x") }') }, 'k');
    expect(Symbol.asyncIterator in result).toBe(false);
    expect((result as ExecutionResult).errors?.[0].message).toMatch(/Argument "times" has invalid value/);
  });
});
