import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { leanRows } from '../../src/platform/db/lean-sql';
import { RateLimiter, type RatePolicy } from '../../src/platform/rate-limit/rate-limiter';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { MINIMAL_PDF } from '../helpers/fixtures';

const QUOTAS = { RATE_LIMIT_PER_TOKEN: '5', RATE_LIMIT_PER_SIGNER: '3', RATE_LIMIT_PER_ADDRESS: '4' };

describe('rate limits: per access token, per signer token, per client address', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ env: QUOTAS });
    owner = await app.createUser();
  });
  afterAll(() => app.close());

  const wallet = (token: string) => fetch(new URL('/api/v1/wallet', app.url), { headers: { authorization: `Bearer ${token}` } });

  it('an access token gets its quota per minute, with the RateLimit fields, then 429 rate_limited and Retry-After', async () => {
    // The windows are the clock's minutes: a run that crosses a minute's end (its `t` jumps back up to a new window's)
    // is begun again with a fresh token, rather than judged on two windows.
    let refused: Response | undefined;
    for (let attempt = 0; !refused && attempt < 3; attempt++) {
      const token = (await app.createUser()).token;
      let secondsLeft = Infinity;
      let crossed = false;
      for (let n = 1; n <= 6 && !crossed; n++) {
        const response = await wallet(token);
        const fields = /^"token";r=(\d+);t=(\d+)$/.exec(response.headers.get('ratelimit') ?? '');
        expect(fields, response.headers.get('ratelimit') ?? '').not.toBeNull();
        crossed = Number(fields![2]) > secondsLeft;
        secondsLeft = Number(fields![2]);
        if (crossed) break;
        expect(response.headers.get('ratelimit-policy')).toBe('"token";q=5;w=60');
        if (n === 6) refused = response;
        else {
          expect(response.status).toBe(200);
          expect(Number(fields![1])).toBe(5 - n);
        }
      }
    }
    if (!refused) throw new Error('three runs in a row crossed a minute');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ data: null, status_code: 429, message: 'rate_limited', success: false });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"token";r=0;t=\d+$/);

    // Another token (another integrator) is untouched by this one's use.
    expect((await wallet(owner.token)).status).toBe(200);
  });

  it('GraphQL shares the token’s quota: over HTTP a 429 GraphQL answer, over graphql-ws the connection is refused (4429)', async () => {
    const token = (await app.createUser()).token;
    const graphql = () =>
      fetch(new URL('/graphql', app.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ me { user_id } }' }),
      });
    for (let n = 0; n < 3; n++) expect((await graphql()).status).toBe(200);
    expect((await wallet(token)).status).toBe(200);
    expect((await graphql()).status).toBe(200);
    const refused = await graphql();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({
      errors: [{ message: 'rate_limited', extensions: { code: 'rate_limited', status: 429, limit: 5, window_seconds: 60 } }],
    });
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('open', () =>
      socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })),
    );
    expect(await closed).toBe(4429);
  });

  it('refused credentials count against the client address: guessing tokens is throttled', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 6; n++) statuses.push((await wallet(`esk_guess${n}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    // A valid token is counted under its own quota, not the address's.
    const fresh = (await app.createUser()).token;
    expect((await wallet(fresh)).status).toBe(200);
  });

  it('a signer token gets its own quota on the signer API', async () => {
    const file = await uploadPdf(app, owner.token, MINIMAL_PDF);
    const session = await createSession(app, owner.token, sessionBody(file, { signers: [signerInput()] }));
    const signerToken = session.signers[0].token;
    const statuses: number[] = [];
    for (let n = 0; n < 4; n++) {
      const response = await fetch(new URL('/signer-api/session', app.url), {
        headers: { authorization: `Bearer ${signerToken}` },
      });
      statuses.push(response.status);
      if (n === 0) expect(response.headers.get('ratelimit-policy')).toBe('"signer";q=3;w=60');
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('the shared count: processes add their requests up in PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const policy: RatePolicy = { name: 'token', limit: 5, windowSeconds: 60 };
  const limiterAt = (clock: { now: number }) =>
    new RateLimiter(
      (text, values) => leanRows(app.services.orm, text, values),
      (error) => {
        throw error;
      },
      60_000,
      () => clock.now,
    );

  it('two processes share one quota: each learns the other’s requests at its next flush', async () => {
    // Near the database's own clock: rows of windows over an hour old are swept at a flush.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const clock = { now: minute + 5_000 };
    const first = limiterAt(clock);
    const second = limiterAt(clock);
    for (let n = 0; n < 3; n++) expect(first.consume(policy, 'tok_shared').allowed).toBe(true);
    await first.flush();
    // The second process has not flushed yet: it decides from its own count only (the documented slack).
    expect(second.consume(policy, 'tok_shared').allowed).toBe(true);
    await second.flush();
    // Now it knows the 3 of the first process: 3 + 1 used, one left.
    expect(second.consume(policy, 'tok_shared')).toMatchObject({ allowed: true, remaining: 0 });
    expect(second.consume(policy, 'tok_shared').allowed).toBe(false);
    await second.flush();
    // The first still knows 3: it learns the second's two when it flushes its own next request, which is
    // the slack docs/api.md states (one flush interval of another process's traffic), and then refuses.
    expect(first.consume(policy, 'tok_shared').allowed).toBe(true);
    await first.flush();
    expect(first.consume(policy, 'tok_shared').allowed).toBe(false);
    const [row] = await leanRows<{ hits: number }>(app.services.orm, `select hits from rate_limit_counters where key = $1`, [
      'token:tok_shared',
    ]);
    expect(row.hits).toBe(6);

    // A new window starts whole, and its reset time counts down to the next minute.
    clock.now = minute + 60_000;
    expect(first.consume(policy, 'tok_shared')).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 60 });
    clock.now = minute + 105_000;
    expect(first.consume(policy, 'tok_shared')).toMatchObject({ allowed: true, remaining: 3, resetSeconds: 15 });
  });

  it('concurrent requests of one caller never get more than the quota within one process', async () => {
    const clock = { now: Date.now() };
    const limiter = limiterAt(clock);
    const decisions = await Promise.all(Array.from({ length: 50 }, async () => limiter.consume(policy, 'tok_race').allowed));
    expect(decisions.filter(Boolean)).toHaveLength(5);
  });

  it('REST answers carry the fields with the default quota of 1200 a minute when nothing is configured', async () => {
    const plain = await startTestApp({ env: { RATE_LIMIT_PER_TOKEN: '1200' } });
    try {
      const user = await plain.createUser();
      const response = await rest(plain, 'GET', '/wallet', { token: user.token });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe('"token";q=1200;w=60');
    } finally {
      await plain.close();
    }
  });
});
