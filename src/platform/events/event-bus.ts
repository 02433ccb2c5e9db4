import type { EntityManager } from '@mikro-orm/postgresql';
import { createPubSub } from '@graphql-yoga/subscription';
import { getEventListeners, setMaxListeners } from 'node:events';
import pg from 'pg';
import type { Logger } from '../logger';

export const EVENTS_CHANNEL = 'esign_events';

/** What travels in a notification: small and by id (NOTIFY payloads stop at about 8 kB). */
export interface BusMessage {
  topic: string;
  detail: Record<string, unknown>;
}

/** Events kept for a listener that has not read them yet (see EventBus.listen). */
const LISTEN_BUFFER = 100;

/** Hundreds of subscribers of one topic are normal here, not a leak. */
function eventTargetWithoutListenerLimit(): EventTarget {
  const target = new EventTarget();
  setMaxListeners(0, target);
  return target;
}

/**
 * Events between every process of the service. Publishing is `pg_notify` on the publisher's own
 * transaction, so an event is delivered only if, and when, the change it announces commits; every
 * process LISTENs on one connection and hands what arrives to its local subscribers (graphql-ws).
 *
 * That connection must be a session of its own: `databaseUrl` is DATABASE_LISTEN_URL when set (a direct
 * PostgreSQL URL past a transaction-mode PgBouncer, which would hand the LISTEN's server connection to other
 * clients between statements, so that no notification ever arrives). Publishing needs no session: `pg_notify`
 * runs in the publisher's transaction on the pool, whatever pool it is (docs/scaling.md).
 */
export class EventBus {
  private readonly target = eventTargetWithoutListenerLimit();
  private readonly pubSub = createPubSub<Record<string, [Record<string, unknown>]>>({ eventTarget: this.target as never });
  private client?: pg.Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;
  private listened = false;
  private readonly reconnected = new Set<() => void>();
  /** The resync event of each topic for the reconnect under way: one event object, read once for its listeners. */
  private readonly resyncs = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'esign-events' });
    client.on('notification', (message) => this.receive(message.payload));
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'event listener connection failed; reconnecting');
      this.scheduleReconnect();
    });
    client.on('end', () => this.scheduleReconnect());
    await client.connect();
    await client.query(`listen ${EVENTS_CHANNEL}`);
    this.client = client;
    const again = this.listened;
    this.listened = true;
    if (again) {
      this.resyncs.clear();
      for (const listener of this.reconnected) listener();
    }
  }

  /**
   * Called each time the listener is back after losing its connection. NOTIFY keeps nothing for a listener
   * that is away: whoever must not miss an event (a token revocation) reads the state again then.
   */
  onReconnect(listener: () => void): () => void {
    this.reconnected.add(listener);
    return () => this.reconnected.delete(listener);
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.client = undefined;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.start().catch((error: unknown) => {
        this.log.warn({ err: error }, 'event listener reconnect failed');
        this.scheduleReconnect();
      });
    }, 500);
  }

  private receive(payload: string | undefined): void {
    if (!payload) return;
    try {
      const message = JSON.parse(payload) as BusMessage;
      this.target.dispatchEvent(new CustomEvent(message.topic, { detail: message.detail }));
    } catch (error) {
      this.log.warn({ err: error }, 'unreadable event notification');
    }
  }

  /** Queues the event in `em`'s transaction (or sends it now outside one). */
  publish(em: EntityManager, topic: string, detail: Record<string, unknown>): Promise<void> {
    return publishEvent(em, topic, detail);
  }

  subscribe(topic: string): AsyncIterable<Record<string, unknown>> {
    return this.pubSub.subscribe(topic) as AsyncIterable<Record<string, unknown>>;
  }

  /**
   * Listens on `topic` from this call on (not from the first `next()`, as `subscribe` does): what is published
   * between this call and the consumer's first read is kept for it. At most LISTEN_BUFFER events wait; beyond that
   * the oldest go (subscribers read the resource afresh on each event, so the newest carries what the others did).
   * With `resync`, the event it makes is added each time the bus is back after losing its connection: what was
   * published meanwhile never arrives, so the listener reads the resource again.
   */
  listen(topic: string, resync?: () => Record<string, unknown>): AsyncIterableIterator<Record<string, unknown>> {
    const queue: Record<string, unknown>[] = [];
    let waiting: ((step: IteratorResult<Record<string, unknown>>) => void) | undefined;
    let closed = false;
    const push = (detail: Record<string, unknown>) => {
      if (waiting) {
        const wake = waiting;
        waiting = undefined;
        wake({ done: false, value: detail });
      } else if (queue.push(detail) > LISTEN_BUFFER) queue.shift();
    };
    const listener = (event: Event) => push((event as CustomEvent<Record<string, unknown>>).detail);
    this.target.addEventListener(topic, listener);
    const unfollow = resync
      ? this.onReconnect(() => {
          let detail = this.resyncs.get(topic);
          if (!detail) this.resyncs.set(topic, (detail = resync()));
          push(detail);
        })
      : undefined;
    const close = () => {
      if (closed) return;
      closed = true;
      this.target.removeEventListener(topic, listener);
      unfollow?.();
      queue.length = 0;
      waiting?.({ done: true, value: undefined });
      waiting = undefined;
    };
    const events: AsyncIterableIterator<Record<string, unknown>> = {
      [Symbol.asyncIterator]: () => events,
      next: () =>
        queue.length > 0
          ? Promise.resolve({ done: false, value: queue.shift()! })
          : closed
            ? Promise.resolve({ done: true, value: undefined })
            : new Promise((resolve) => (waiting = resolve)),
      return: async () => {
        close();
        return { done: true, value: undefined };
      },
      throw: async (error: unknown) => {
        close();
        throw error;
      },
    };
    return events;
  }

  /** How many subscribers of this process listen on `topic` now (tests wait on it rather than sleep). */
  subscriberCount(topic: string): number {
    return getEventListeners(this.target, topic).length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
  }
}

/**
 * Queues an event in `em`'s transaction (or sends it now outside one). Needs no running bus: a process that
 * only writes (the CLI revoking a token) reaches the listeners of every other process.
 */
export async function publishEvent(em: EntityManager, topic: string, detail: Record<string, unknown>): Promise<void> {
  const message: BusMessage = { topic, detail };
  await em
    .getConnection()
    .execute('select pg_notify(?, ?)', [EVENTS_CHANNEL, JSON.stringify(message)], 'all', em.getTransactionContext());
}
