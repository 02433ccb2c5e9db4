import type { Actor } from '../auth/actor';

/**
 * A documented REST read's `data`, computed in-process for a given actor: what `GET /api/v1/<path>` answers that
 * actor, without HTTP. Webhook events carry their resource this way, as the REST reads show it.
 */
export interface RestReader {
  /** Null when the read fails (the resource is gone, or no longer the actor's). */
  read(operation: `Query.${string}`, variables: Record<string, unknown>, actor: Actor): Promise<unknown>;
}
