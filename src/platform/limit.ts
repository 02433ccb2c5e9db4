/**
 * Runs at most `max` of the works given to it at once; the others wait their turn. By hand: p-limit, the usual
 * library, is ESM-only since version 4, which this CommonJS build cannot require.
 */
export function limitTo(max: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    while (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
