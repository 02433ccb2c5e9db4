/**
 * The run's mode, read here and nowhere else. `npm run bench` is the full run: the sizes, floors asserted.
 * `npm run bench:quick` (BENCH_QUICK=1) runs every suite through the same code at small sizes (a few seconds each),
 * so that CI sees a benchmark that no longer runs: its checks (answers compared, stamps counted, rows made) still
 * throw, its rows are printed with their floors, but no floor is asserted, and its results go to
 * bench/results-quick.json.
 */
export const quick = process.env.BENCH_QUICK === '1';

/** `full` in the full run, `small` in the quick one. */
export function sized<T>(full: T, small: T): T {
  return quick ? small : full;
}
