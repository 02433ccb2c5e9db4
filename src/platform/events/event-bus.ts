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

/** How long a starting event is handed to followers that come after it (EventBus.follow). */
const STARTING_EVENT_SHARED_MS = 1000;

/** The target of `subscribe` (graphql-yoga's pubsub takes one); several consumers of a topic are no leak. */
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
  /**
   * The listen() listeners of each topic. Not the EventTarget: it walks its whole list on every add and remove, so
   * thousands of subscribers of one order cost seconds of event loop as they come and go.
   */
  private readonly listeners = new Map<string, Set<(detail: Record<string, unknown>) => void>>();
  private readonly pubSub = createPubSub<Record<string, [Record<string, unknown>]>>({ eventTarget: this.target as never });
  private client?: pg.Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;
  private listened = false;
  private readonly reconnected = new Set<() => void>();
  /** The resync event of each topic for the reconnect under way: one event object, read once for its listeners. */
  private readonly resyncs = new Map<string, Record<string, unknown>>();
  /** Each topic's latest starting event (follow), until an event of the topic arrives or the connection drops. */
  private readonly startingEvents = new Map<string, { event: Record<string, unknown>; madeAt: number }>();

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
      this.startingEvents.clear();
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
    // What is published from now on is not heard: no starting read made before it may stand for a later one.
    this.startingEvents.clear();
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
    let message: BusMessage;
    try {
      message = JSON.parse(payload) as BusMessage;
    } catch (error) {
      this.log.warn({ err: error }, 'unreadable event notification');
      return;
    }
    this.startingEvents.delete(message.topic);
    // Every listener gets the same detail object: their shared reads are keyed on it.
    const listeners = this.listeners.get(message.topic);
    if (listeners) for (const listener of [...listeners]) listener(message.detail);
    this.target.dispatchEvent(new CustomEvent(message.topic, { detail: message.detail }));
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
    const listeners = this.listeners.get(topic) ?? new Set();
    this.listeners.set(topic, listeners.add(push));
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
      listeners.delete(push);
      if (listeners.size === 0 && this.listeners.get(topic) === listeners) {
        this.listeners.delete(topic);
        this.startingEvents.delete(topic);
      }
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

  /**
   * listen(topic, event), and the event a follower's starting read is made with (startingWith): the one made for an
   * earlier follower of the topic while no event of it has arrived since (within STARTING_EVENT_SHARED_MS), else
   * `event()`. Reads are shared per event object, so followers that come together (thousands of clients reconnecting
   * at once) cost one starting read, not one each. Nothing is missed: a change after that read is announced after
   * it, and its event either arrived before this call (the shared event is dropped then) or reaches this listener.
   */
  follow(
    topic: string,
    event: () => Record<string, unknown>,
  ): { start: Record<string, unknown>; live: AsyncIterableIterator<Record<string, unknown>> } {
    const live = this.listen(topic, event);
    const known = this.startingEvents.get(topic);
    if (known && performance.now() - known.madeAt < STARTING_EVENT_SHARED_MS) return { start: known.event, live };
    const start = event();
    this.startingEvents.set(topic, { event: start, madeAt: performance.now() });
    return { start, live };
  }

  /** How many subscribers of this process listen on `topic` now (tests wait on it rather than sleep). */
  subscriberCount(topic: string): number {
    return (this.listeners.get(topic)?.size ?? 0) + getEventListeners(this.target, topic).length;
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
