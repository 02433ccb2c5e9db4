/**
 * Pending sign requests: one digest each, waiting for the signer's approval on the bridge's own page, expiring after
 * five minutes. Held in memory only: a restart forgets them, and the signing page then starts a new one.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { TokenCertificate } from './tokens.ts';

export const REQUEST_LIFETIME_MS = 5 * 60_000;
/** Finished requests stay readable this long, so that a slow poller still learns the outcome. */
const KEEP_FINISHED_MS = 10 * 60_000;
/** A runaway page cannot fill the memory with requests nobody approves. */
const MAX_WAITING = 50;

export type RequestStatus = 'waiting' | 'signed' | 'refused' | 'expired';

export interface SignRequest {
  id: string;
  /** The secret in approve_url: only the page that made the request can open the approval page. */
  key: string;
  origin: string;
  certificate: TokenCertificate;
  digest: Buffer;
  description: string;
  createdAt: number;
  expiresAt: number;
  status: RequestStatus;
  signature?: Buffer;
  error?: { code: string; message: string };
}

export interface NewRequest {
  origin: string;
  certificate: TokenCertificate;
  digest: Buffer;
  description: string;
}

export class TooManyRequests extends Error {
  override name = 'TooManyRequests';
}

export class SignRequests {
  private readonly requests = new Map<string, SignRequest>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  create(input: NewRequest): SignRequest {
    this.sweep();
    const waiting = [...this.requests.values()].filter((r) => r.status === 'waiting').length;
    if (waiting >= MAX_WAITING) throw new TooManyRequests('too many sign requests are waiting for approval');
    const createdAt = this.now();
    const request: SignRequest = {
      ...input,
      id: randomBytes(16).toString('hex'),
      key: randomBytes(32).toString('base64url'),
      createdAt,
      expiresAt: createdAt + REQUEST_LIFETIME_MS,
      status: 'waiting',
    };
    this.requests.set(request.id, request);
    this.scheduleExpiry(request);
    return request;
  }

  get(id: string): SignRequest | undefined {
    const request = this.requests.get(id);
    if (request) this.expireIfDue(request);
    return request;
  }

  /** The request when `key` is its secret (compared in constant time), else undefined. */
  getWithKey(id: string, key: string): SignRequest | undefined {
    const request = this.get(id);
    if (!request) return undefined;
    const given = Buffer.from(key, 'utf8');
    const expected = Buffer.from(request.key, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected) ? request : undefined;
  }

  finish(request: SignRequest, outcome: { signature: Buffer } | { error: { code: string; message: string } }): void {
    if (request.status !== 'waiting') return;
    if ('signature' in outcome) {
      request.status = 'signed';
      request.signature = outcome.signature;
    } else {
      request.status = 'refused';
      request.error = outcome.error;
    }
    this.changed(request);
  }

  /** Resolves when the request leaves `waiting`, after `timeoutMs`, or when `signal` aborts. */
  waitForChange(request: SignRequest, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (request.status !== 'waiting' || timeoutMs <= 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.listeners.get(request.id) ?? new Set();
      this.listeners.set(request.id, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      set.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends every long poll (on shutdown). */
  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    for (const set of this.listeners.values()) for (const listener of [...set]) listener();
  }

  /** Long polls learn of the expiry when it happens, not at their own timeout. */
  private scheduleExpiry(request: SignRequest): void {
    const timer = setTimeout(
      () => {
        this.expireIfDue(request);
        if (request.status === 'waiting') this.scheduleExpiry(request); // the timer fired a little early
      },
      Math.max(request.expiresAt - this.now(), 1),
    );
    timer.unref(); // a pending request must not keep the process alive on shutdown
    this.timers.set(request.id, timer);
  }

  private expireIfDue(request: SignRequest): void {
    if (request.status !== 'waiting' || this.now() < request.expiresAt) return;
    request.status = 'expired';
    request.error = { code: 'expired', message: 'The signer did not approve the request in time.' };
    this.changed(request);
  }

  private changed(request: SignRequest): void {
    clearTimeout(this.timers.get(request.id));
    this.timers.delete(request.id);
    for (const listener of [...(this.listeners.get(request.id) ?? [])]) listener();
    this.listeners.delete(request.id);
  }

  private sweep(): void {
    const now = this.now();
    for (const request of this.requests.values()) {
      this.expireIfDue(request);
      if (request.status !== 'waiting' && now > request.expiresAt + KEEP_FINISHED_MS) this.requests.delete(request.id);
    }
  }
}
