/** Set on a subscription's source stream that starts with the resource's current state (see startingWith). */
export const STARTS_WITH_STATE = Symbol('startsWithState');

export interface StartingPointStream extends AsyncIterableIterator<object> {
  readonly [STARTS_WITH_STATE]: true;
}

/**
 * A subscription's source: `start` first (the resolver reads the resource's current state for it), then every event
 * of `live`. `live` must be listening already (EventBus.listen), so a change committed between listening and
 * reading is not lost: it is in that read, or in the read of an event after it, or both. subscribeSharingResults
 * sends an answer of such a stream only when it differs from the one sent before it, so "both" is sent once.
 */
export function startingWith(start: object, live: AsyncIterableIterator<Record<string, unknown>>): StartingPointStream {
  let started = false;
  const stream: StartingPointStream = {
    [STARTS_WITH_STATE]: true,
    [Symbol.asyncIterator]: () => stream,
    next() {
      if (started) return live.next();
      started = true;
      return Promise.resolve({ done: false, value: start });
    },
    return: () => live.return!(),
    throw: (error: unknown) => live.throw!(error),
  };
  return stream;
}
