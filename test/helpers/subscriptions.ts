import type { TestApp } from './app';

/**
 * Resolves once the service holds more subscribers of `topic` than `before` (the subscription is live: the next
 * change on it reaches the client), or once `refused()` says the server turned it down. A graphql-ws server sends
 * nothing when a subscription starts, so this is what a test waits on instead of a pause.
 */
export async function untilSubscribed(
  app: TestApp,
  topic: string,
  before: number,
  refused: () => boolean = () => false,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (app.services.events.subscriberCount(topic) <= before && !refused()) {
    if (Date.now() > deadline) throw new Error(`no subscriber of ${topic} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
