import type { EntityManager } from '@mikro-orm/postgresql';
import { publishEvent } from '../events/event-bus';
import type { Logger } from '../logger';

/**
 * How a socket whose access token was revoked or has expired is closed: graphql-ws's Unauthorized, the code
 * a `connection_init` with a bad token already gets. graphql-ws clients treat it as fatal and do not
 * reconnect with the same token (4403 Forbidden would be retried).
 */
export const TOKEN_ENDED_CLOSE = { code: 4401, reason: 'unauthorized' } as const;

/** The notice every process of the service hears when an access token is revoked. */
export const TOKEN_REVOKED_TOPIC = 'access_token_revoked';

/** Announces a revocation on `em`'s transaction: heard by every process once, and only if, it commits. */
export function announceTokenRevoked(em: EntityManager, tokenId: string): Promise<void> {
  return publishEvent(em, TOKEN_REVOKED_TOPIC, { token_id: tokenId });
}

export interface ClosableSocket {
  close(code: number, reason: string): void;
}

/** setTimeout fires at once for anything longer (with a warning); tokens may live for years. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * How long a revocation is remembered for sockets that authenticate after it: a connection whose token
 * look-up read the row just before the revocation committed may register just after its notice arrived.
 * The window is one look-up long; a minute is ample and keeps the memory bounded.
 */
const REVOCATION_MEMORY_MS = 60_000;

interface Tracked {
  socket: ClosableSocket;
  timer?: NodeJS.Timeout;
}

/**
 * The long-lived connections of this process (graphql-ws sockets) by the access token that opened them.
 * A token is checked once, at `connection_init`; from then on the socket lives until the token is revoked
 * (`follow` hears the notices of every process) or expires (a timer per socket, cleared when it closes).
 */
export class TokenSockets {
  private readonly byToken = new Map<string, Set<Tracked>>();
  private readonly recentlyRevoked = new Map<string, number>();
  private following?: AsyncIterator<unknown>;

  constructor(private readonly log: Logger) {}

  /** Closes `socket` when the token ends; call the returned function when the socket closes. */
  track(tokenId: string, expiresAt: Date | undefined, socket: ClosableSocket): () => void {
    this.forgetOldRevocations();
    const tracked: Tracked = { socket };
    if (this.recentlyRevoked.has(tokenId)) {
      socket.close(TOKEN_ENDED_CLOSE.code, TOKEN_ENDED_CLOSE.reason);
      return () => undefined;
    }
    let sockets = this.byToken.get(tokenId);
    if (!sockets) this.byToken.set(tokenId, (sockets = new Set()));
    sockets.add(tracked);
    if (expiresAt) {
      const arm = () => {
        const wait = expiresAt.getTime() - Date.now();
        if (wait <= 0) {
          tracked.timer = undefined;
          this.log.info({ token_id: tokenId }, 'access token expired: closing its graphql-ws connection');
          socket.close(TOKEN_ENDED_CLOSE.code, TOKEN_ENDED_CLOSE.reason);
          return;
        }
        tracked.timer = setTimeout(arm, Math.min(wait, LONGEST_TIMER_MS)).unref();
      };
      arm();
    }
    return () => {
      clearTimeout(tracked.timer);
      sockets.delete(tracked);
      if (sockets.size === 0 && this.byToken.get(tokenId) === sockets) this.byToken.delete(tokenId);
    };
  }

  /** Closes every socket of this process opened with the token. */
  revoked(tokenId: string): void {
    this.forgetOldRevocations();
    // Re-inserted, so that the map stays in time order for forgetOldRevocations.
    this.recentlyRevoked.delete(tokenId);
    this.recentlyRevoked.set(tokenId, Date.now());
    const sockets = this.byToken.get(tokenId);
    if (!sockets) return;
    this.log.info({ token_id: tokenId, sockets: sockets.size }, 'access token revoked: closing its graphql-ws connections');
    for (const tracked of sockets) {
      clearTimeout(tracked.timer);
      tracked.socket.close(TOKEN_ENDED_CLOSE.code, TOKEN_ENDED_CLOSE.reason);
    }
    this.byToken.delete(tokenId);
  }

  /**
   * Closes the sockets of every token `stillValid` does not return (revoked, expired or gone): for the
   * revocations whose notice this process missed while its listener was reconnecting.
   */
  async recheck(stillValid: (tokenIds: string[]) => Promise<Set<string>>): Promise<void> {
    const tokenIds = [...this.byToken.keys()];
    if (tokenIds.length === 0) return;
    try {
      const valid = await stillValid(tokenIds);
      for (const tokenId of tokenIds) if (!valid.has(tokenId)) this.revoked(tokenId);
    } catch (error) {
      this.log.error({ err: error }, 'rechecking the tokens of open graphql-ws connections failed');
    }
  }

  /** Acts on the revocation notices of every process (the event bus's TOKEN_REVOKED_TOPIC). */
  follow(notices: AsyncIterable<Record<string, unknown>>): void {
    const iterator = notices[Symbol.asyncIterator]();
    this.following = iterator;
    void (async () => {
      for (;;) {
        const step = await iterator.next();
        if (step.done) return;
        if (typeof step.value.token_id === 'string') this.revoked(step.value.token_id);
      }
    })().catch((error: unknown) => this.log.error({ err: error }, 'following token revocations failed'));
  }

  async stop(): Promise<void> {
    await this.following?.return?.();
    for (const sockets of this.byToken.values()) for (const tracked of sockets) clearTimeout(tracked.timer);
    this.byToken.clear();
  }

  private forgetOldRevocations(): void {
    const before = Date.now() - REVOCATION_MEMORY_MS;
    for (const [tokenId, at] of this.recentlyRevoked) {
      if (at >= before) break;
      this.recentlyRevoked.delete(tokenId);
    }
  }
}
