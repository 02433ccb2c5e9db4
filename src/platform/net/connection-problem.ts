/** Why a fetch failed, in a word an operator can act on: undici's "fetch failed" says nothing, its cause's code does (ECONNREFUSED, ENOTFOUND...). */
export function connectionProblem(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : 'no answer');
}
