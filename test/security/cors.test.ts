import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';

/**
 * Cross-origin calls (issue 34: a frontend team's page calls the service with a browser token): both faces answer
 * CORS for any origin, credentials never included (tokens travel in a header, no cookie is ever set), and a preflight
 * is answered before authentication.
 */
describe('CORS on /graphql and /api/v1', () => {
  let app: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => app?.close());

  it('answers a preflight with 204, the methods and the headers the faces take', async () => {
    for (const path of ['/graphql', '/api/v1/esign/list']) {
      const response = await fetch(new URL(path, app.url), {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-headers')).toContain('authorization');
      expect(response.headers.get('access-control-allow-methods')).toContain('POST');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('lets a page read the answers (and refusals) of calls it makes with a token', async () => {
    const answer = await fetch(new URL('/api/v1/esign/list', app.url), {
      headers: { origin: 'https://app.example.com', authorization: `Bearer ${owner.token}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    const refused = await fetch(new URL('/api/v1/esign/list', app.url), { headers: { origin: 'https://app.example.com' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('set-cookie')).toBeNull();
    // Same-origin and server calls carry no Origin: nothing is added.
    const plain = await fetch(new URL('/api/v1/esign/list', app.url), { headers: { authorization: `Bearer ${owner.token}` } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });
});
