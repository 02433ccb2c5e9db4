/**
 * Waits for a condition the code under test reaches by itself (a job, a socket, a process), polling; never waits for
 * a span of time. `timeoutMs` only bounds a run that would otherwise hang: it fails with what was awaited.
 */
export async function until(
  done: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 20_000, pollMs = 50 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
