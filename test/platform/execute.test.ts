import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../src/platform/graphql/context';
import { executeOperation, isCompiled } from '../../src/platform/graphql/execute';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadAsset, uploadPdf } from '../helpers/factories';

const DETAILS = `query Details($id: String!) {
  esignSession(client_id: $id) {
    client_id status created_at expires_at signer_idx email_template_overrides { company_name }
    signers {
      signer_id eligible token invite_url status positions email_verified_at
      elements { field_id x y page type value asset { client_id } }
      name_match { enforce status } face_match { enforce match_score } location { source }
    }
  }
}`;

/**
 * An operation runs with graphql-js the first time and compiled by graphql-jit from the second. Whatever it
 * answers (data, refusals, partial answers, refused variables), the compiled runs must answer exactly as the
 * first did, and a mutation must take effect once per request.
 */
describe('compiled execution answers as graphql-js does', () => {
  let app: TestApp;
  let owner: TestUser;
  let clientId: string;

  /** The same request three times: the first runs interpreted, the next two compiled. */
  async function thrice(query: string, variables: Record<string, unknown> = {}) {
    const answers = [];
    for (let run = 0; run < 3; run++) {
      const response = await fetch(new URL('/graphql', app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      answers.push({ status: response.status, body: (await response.json()) as any });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    return answers[0];
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    const pdf = await uploadPdf(app, owner.token);
    const asset = await uploadAsset(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(pdf, {
        email_template_overrides: { company_name: 'Acme' },
        signers: [
          signerInput({ elements: [signatureAt(0), { x: 1, y: 2, page: 1, type: 'image', alignment: 'left', value: asset }] }),
          signerInput({ full_name: 'Ravi Kumar' }),
        ],
      }),
    );
    clientId = session.client_id;
  });
  afterAll(async () => app.close());

  it('compiles an operation on its second run, and the compiled run answers the same data', async () => {
    const document = parse(DETAILS);
    const run = () =>
      executeOperation({
        schema: app.http.schema,
        document,
        variableValues: { id: clientId },
        contextValue: createRequestContext(app.services, { userId: owner.user_id, tokenId: owner.token_id }),
      });
    const interpreted = await run();
    expect(isCompiled(app.http.schema, document)).toBe(false);
    const compiled = await run();
    expect(isCompiled(app.http.schema, document)).toBe(true);
    expect(compiled).toEqual(interpreted);
    expect(interpreted.errors).toBeUndefined();
    const session = (interpreted.data as any).esignSession;
    expect(session.signers).toHaveLength(2);
    expect(session.signers[0].elements[1].asset).not.toBeNull();
    expect(JSON.stringify(await run())).toBe(JSON.stringify(interpreted));
  });

  it('a whole answer over HTTP, on both faces', async () => {
    const answer = await thrice(DETAILS, { id: clientId });
    expect(answer.status).toBe(200);
    expect(answer.body.data.esignSession.client_id).toBe(clientId);
    const reads = [];
    for (let run = 0; run < 3; run++) {
      reads.push(await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } }));
    }
    expect(reads.map((read) => read.status)).toEqual([200, 200, 200]);
    expect(reads[1].body).toEqual(reads[0].body);
    expect(reads[2].body).toEqual(reads[0].body);
  });

  it('a refusal from a resolver: code, path and locations', async () => {
    const answer = await thrice(DETAILS, { id: 'esign_missing' });
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors).toEqual([
      {
        message: 'Esign client with the given client_id not found',
        path: ['esignSession'],
        locations: [{ line: 2, column: 3 }],
        extensions: { code: 'not_found', status: 404 },
      },
    ]);
  });

  it('a refused non-null root field takes the whole answer with it, the other field included', async () => {
    const answer = await thrice(`query Two($id: String!) { gone: esignSession(client_id: $id) { client_id } me { user_id } }`, {
      id: 'esign_missing',
    });
    // Both root fields are non-null: the refusal bubbles up to `data`.
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors.map((error: any) => [error.path, error.extensions.code])).toEqual([[['gone'], 'not_found']]);
  });

  it('refused variables: missing, null for a required one, of the wrong type', async () => {
    const missing = await thrice(DETAILS, {});
    const nulled = await thrice(DETAILS, { id: null });
    const mistyped = await thrice(DETAILS, { id: { not: 'a string' } });
    for (const answer of [missing, nulled, mistyped]) {
      expect(answer.status).toBe(400);
      expect(answer.body.data).toBeUndefined();
      expect(answer.body.errors).toHaveLength(1);
      expect(answer.body.errors[0].extensions.code).toBe('bad_request');
    }
    expect(missing.body.errors[0].message).toBe('Variable "$id" of required type "String!" was not provided.');
  });

  it('refused input objects: an unknown field, a float for an Int, a string for a list', async () => {
    const start = `mutation Start($signers: [SignerInput!], $expiry: Int) {
      initializeEsign(file_id: "file_none", sign_type: "suresign", signers: $signers, expiry_seconds: $expiry) { client_id }
    }`;
    const signer = { full_name: 'Asha Rao', email: 'asha@example.com', elements: [{ x: 1, y: 1, page: 0, type: 'signature' }] };
    const answers = [
      await thrice(start, { signers: [{ ...signer, nickname: 'A' }] }),
      await thrice(start, { signers: [signer], expiry: 3600.5 }),
      await thrice(start, { signers: 'Asha' }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors[0].extensions.code).toBe('bad_request');
    }
    expect(answers[0].body.errors[0].message).toContain('"nickname"');
  });

  it('a mutation takes effect once per request, compiled or not', async () => {
    const pdf = await uploadPdf(app, owner.token);
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await createSession(app, owner.token, sessionBody(pdf)));
    const cancel = `mutation Cancel($id: String, $reason: String) { cancelEsign(client_id: $id, reason: $reason) { client_id status cancel_reason } }`;
    const answers = [];
    for (const session of sessions) {
      const response = await fetch(new URL('/graphql', app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: cancel, variables: { id: session.client_id, reason: 'duplicate' } }),
      });
      answers.push((await response.json()) as any);
    }
    expect(answers.map((answer) => answer.data.cancelEsign)).toEqual(
      sessions.map((session) => ({ client_id: session.client_id, status: 'cancelled', cancel_reason: 'duplicate' })),
    );
    const ids = sessions.map((session) => session.client_id);
    const events = await app.services.orm.em
      .fork()
      .getConnection()
      .execute(
        `select session_id, count(*)::int as n from esign_audit_events where event = 'session_cancelled' and session_id in (?, ?, ?) group by session_id`,
        ids,
      );
    expect(events.map((row: any) => row.n)).toEqual([1, 1, 1]);
    // Cancelling again is refused the same way, compiled.
    const again = await thrice(cancel, { id: sessions[0].client_id, reason: 'again' });
    expect(again.body.errors[0].extensions.code).toBeDefined();
  });
});
