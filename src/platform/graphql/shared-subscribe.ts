import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { STARTS_WITH_STATE, type StartingPointStream } from './starting-point';

type Result = ExecutionResult | Promise<ExecutionResult>;

/** A shared result as JSON, made once for all its subscribers (a changes-only stream compares it with the last). */
const jsonOfResult = new WeakMap<object, string>();

function jsonOf(result: ExecutionResult): string {
  let json = jsonOfResult.get(result);
  if (json === undefined) jsonOfResult.set(result, (json = JSON.stringify(result)));
  return json;
}

/**
 * Answers that go out in one turn of the event loop. One event wakes every subscriber of its topic, and each answer
 * is a socket write (thousands of them take a fraction of a second): past this many, the rest wait for the next
 * turn (setImmediate), so that requests and other events are served between the parts of a fan-out.
 */
const ANSWERS_PER_TURN = 200;
let answeredThisTurn = 0;
let turnScheduled = false;
const waitingForTurn: (() => void)[] = [];

/** Undefined when the answer may go now; otherwise resolves when its turn comes (first come, first served). */
function answerTurn(): Promise<void> | undefined {
  if (!turnScheduled) {
    turnScheduled = true;
    setImmediate(nextTurn);
  }
  if (waitingForTurn.length === 0 && answeredThisTurn < ANSWERS_PER_TURN) {
    answeredThisTurn++;
    return undefined;
  }
  return new Promise((resolve) => waitingForTurn.push(resolve));
}

function nextTurn(): void {
  const released = waitingForTurn.splice(0, ANSWERS_PER_TURN);
  answeredThisTurn = released.length;
  turnScheduled = released.length > 0;
  if (turnScheduled) setImmediate(nextTurn);
  for (const resolve of released) resolve();
}

/** Results per event object, per (owner, operation): dropped with the event once every subscriber got it. */
const resultsPerEvent = new WeakMap<object, Map<string, Result>>();

/**
 * graphql-js runs a subscription's selection once per subscriber and event. Subscribers of the same owner
 * with the same operation and variables get the same answer to the same event (the bus hands every
 * subscriber the same event object), so it is executed once and shared: 500 clients watching an order cost
 * one execution per event instead of 500. `sharingKey` must include everything the answer depends on.
 */
export async function subscribeSharingResults(
  args: ExecutionArgs,
  sharingKey: string,
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream as ExecutionResult;
  const events = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  // A stream that starts with the current state sends changes: an answer equal to the one before it says nothing
  // new (an event already shown by the starting read, or a change outside the selection) and is not sent.
  const changesOnly = (stream as Partial<StartingPointStream>)[STARTS_WITH_STATE] === true;
  let lastSent: string | undefined;

  const run = (payload: unknown): Result => {
    if (typeof payload !== 'object' || payload === null) return execute({ ...args, rootValue: payload });
    let results = resultsPerEvent.get(payload);
    if (!results) resultsPerEvent.set(payload, (results = new Map()));
    let result = results.get(sharingKey);
    if (!result) results.set(sharingKey, (result = execute({ ...args, rootValue: payload })));
    return result;
  };

  // An explicit iterator rather than an async generator: return() must reach the source at once even
  // while a next() is still waiting for an event (a generator would queue it until the next event).
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      for (;;) {
        const step = await events.next();
        if (step.done) return { done: true, value: undefined };
        const result = await run(step.value);
        if (changesOnly) {
          const json = jsonOf(result);
          if (json === lastSent) continue;
          lastSent = json;
        }
        const turn = answerTurn();
        if (turn) await turn;
        return { done: false, value: result };
      }
    },
    async return() {
      await events.return?.();
      return { done: true, value: undefined };
    },
    async throw(error: unknown) {
      await events.return?.();
      throw error;
    },
  };
  return iterator;
}
