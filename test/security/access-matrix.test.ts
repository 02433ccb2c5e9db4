/**
 * The access matrix of issue 16: every operation of the service, on each of its faces, against every kind of
 * credential.
 *
 * - Operations are discovered from the running app: the REST routes from `GET /api/v1/openapi.json` (every path
 *   and method, the multipart uploads included), the GraphQL root fields (Query, Mutation, Subscription) from the
 *   app's schema, the signer API's routes from its router. The tables below say how to call each one with valid
 *   arguments naming the owner's fixtures; the first tests fail when a route or a field appears (or goes) that the
 *   tables do not cover.
 * - Faces: REST (`/api/v1`), GraphQL over HTTP (`/graphql`), GraphQL over graphql-ws (same path).
 * - Credentials: none, malformed (`Bearer nope`, `Basic xyz`, `Bearer esk_` + unknown or garbage), an expired and a
 *   revoked access token (made and revoked with the CLI's functions), a signer's token, another user's token, the
 *   owner's token.
 * - Expected: the refused credentials answer REST `401` with the envelope, GraphQL over HTTP `401` with code
 *   `unauthorized`, graphql-ws a close with 4401 during connection_init (no ack). Another user gets, for an
 *   operation naming one of the owner's resources, exactly the answer an unknown id of the same kind gets (the
 *   contract's `404` codes, or the 400/422 codes it documents for references inside a body), and the resource is
 *   untouched; for lists and other operations, none of the owner's data. The owner succeeds.
 * - Admin operations (issue 22, `/admin/...` and the `admin*` fields) act on any user's account, here the owner's:
 *   user tokens (the owner's own, another user's) get `403 forbidden` and change nothing; an admin-scope token (the
 *   CLI's `tokens create --scope admin`) succeeds. The refused credentials above answer 401 there too (a signer's
 *   token is no access token at all).
 * - Token scopes (issue 34, docs/tokens.md): the owner's tokens of scope `read`, `sessions`, `stamps` and `webhooks`
 *   (made over the API) call every operation on every face: outside the token's scopes `403 forbidden` naming the
 *   scope, inside them the operation works. Browser tokens are in test/tokens.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createSignerApi } from '../../src/modules/signer-journey/signer-api';
import { issueAccessToken, revokeAccessToken } from '../../src/modules/users/access-tokens';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import {
  createSession,
  FOUR_PAGE_PDF,
  sessionBody,
  signatureAt,
  signerInput,
  uploadAsset,
  uploadPdf,
} from '../helpers/factories';
import { makePng } from '../helpers/fixtures';
import { makePkcs12 } from '../helpers/pfx';
import { until } from '../helpers/until';

// Answers are checked field by field against what each operation documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

// ---------------------------------------------------------------------------------------------------------------
// The owner's resources, and unknown ids of the same kinds

interface Ids {
  pdf: string;
  asset: string;
  /** A pending session (suresign, one signer). */
  session: string;
  /** That session's signer. */
  signer: string;
  /** A completed session (signed through the signer API). */
  completed: string;
  template: string;
  /** A mock stamp order, procured. */
  order: string;
  /** An available stamp instance of that order. */
  stamp: string;
  pfx: string;
  /** A webhook endpoint (on the local receiver, enabled). */
  endpoint: string;
  /** The event of a `webhooks/test` ping to that endpoint (delivered). */
  event: string;
  /** A bulk send of one row from the template (completed). */
  bulk: string;
  /** An access token the owner made over the API (scope read). */
  token: string;
}

const ID_PREFIX: Ids = {
  pdf: 'file_',
  asset: 'file_',
  session: 'esign_',
  signer: 'signer_',
  completed: 'esign_',
  template: 'template_',
  order: 'stamp_',
  stamp: 'stamp_inst_',
  pfx: 'pfx_',
  endpoint: 'whk_',
  event: 'evt_',
  bulk: 'bulk_',
  token: 'tok_',
};

/** Ids of the documented form (prefix + 32 hex) that nobody holds. */
function unknownIds(): Ids {
  return Object.fromEntries(
    Object.entries(ID_PREFIX).map(([kind, prefix]) => [kind, `${prefix}${randomBytes(16).toString('hex')}`]),
  ) as unknown as Ids;
}

/** An answer with each id replaced by its kind, so that answers about different ids compare. */
function normalized(answer: unknown, ids: Ids): unknown {
  let text = JSON.stringify(answer);
  for (const [kind, id] of Object.entries(ids)) text = text.split(id).join(`<${kind}>`);
  return JSON.parse(text);
}

interface World {
  app: TestApp;
  owner: TestUser;
  other: TestUser;
  ids: Ids;
  /** The other user's own resources of each kind (the controls of the reference cases). */
  otherIds: Pick<Ids, 'pdf' | 'asset' | 'pfx' | 'stamp' | 'template'>;
  signerToken: string;
  /** An admin-scope token of a third user. */
  admin: TestUser;
  expiredToken: string;
  revokedToken: string;
  ledgerEntry: string;
  orderKey: string;
  orderBody: Record<string, unknown>;
  pfxBytes: Buffer;
  /** Where the webhook endpoints of the matrix point: a receiver on 127.0.0.1 answering 200. */
  receiverUrl: string;
  /** The owner's tokens of one scope each, made over the API (docs/tokens.md). */
  scoped: Record<NarrowScope, TestUser>;
}

let w: World;
let receiver: http.Server | undefined;

// ---------------------------------------------------------------------------------------------------------------
// Credentials

interface Credential {
  /** The Authorization header (REST, GraphQL over HTTP) and the connection_init `authorization` (graphql-ws). */
  authorization: () => string | undefined;
}

const REFUSED_CREDENTIALS: Record<string, Credential> = {
  'no Authorization header': { authorization: () => undefined },
  'Bearer nope': { authorization: () => 'Bearer nope' },
  'Basic xyz': { authorization: () => 'Basic xyz' },
  'Bearer esk_ + unknown token': { authorization: () => `Bearer esk_${randomBytes(32).toString('base64url')}` },
  'Bearer esk_ + garbage': { authorization: () => 'Bearer esk_!!*garbage*!!' },
  'expired access token': { authorization: () => `Bearer ${w.expiredToken}` },
  'revoked access token': { authorization: () => `Bearer ${w.revokedToken}` },
  "a signer's token": { authorization: () => `Bearer ${w.signerToken}` },
};

const bearer = (user: TestUser) => `Bearer ${user.token}`;

// ---------------------------------------------------------------------------------------------------------------
// Transports

interface Answer {
  status: number;
  body: Json;
}

interface RestCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below /api/v1. */
  path: string;
  query?: Record<string, string | number>;
  json?: unknown;
  headers?: Record<string, string>;
  /** A multipart body (made afresh for each request). */
  form?: () => FormData;
}

async function restSend(call: RestCall, authorization: string | undefined): Promise<Answer> {
  const url = new URL(`/api/v1${call.path}`, w.app.url);
  for (const [key, value] of Object.entries(call.query ?? {})) url.searchParams.set(key, String(value));
  const headers: Record<string, string> = { ...call.headers };
  if (authorization !== undefined) headers.authorization = authorization;
  let body: FormData | string | undefined;
  if (call.form) body = call.form();
  else if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  }
  const response = await fetch(url, { method: call.method, headers, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

interface GqlCall {
  query: string;
  variables?: Record<string, unknown>;
  /** Sent as a GraphQL multipart request with the file at `variables.file`. */
  file?: { bytes: Uint8Array; filename: string };
}

async function gqlSend(call: GqlCall, authorization: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  let body: FormData | string;
  if (call.file) {
    headers['apollo-require-preflight'] = 'true';
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: call.query, variables: { ...call.variables, file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob([new Uint8Array(call.file.bytes)]), call.file.filename);
    body = form;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify({ query: call.query, variables: call.variables });
  }
  const response = await fetch(new URL('/graphql', w.app.url), { method: 'POST', headers, body });
  return { status: response.status, body: await response.json() };
}

const wsUrl = () => `${w.app.url.replace('http', 'ws')}/graphql`;

/**
 * A raw graphql-transport-ws handshake with this connection_init payload. Only if the server acknowledges does
 * the operation go out (a `subscribe` before the ack is closed with 4401 by graphql-ws itself, whatever the token).
 */
function wsHandshake(
  authorization: string | undefined,
  operation: GqlCall,
  upgradeHeaders: Record<string, string> = {},
): Promise<{ code: number; reason: string; messages: Json[] }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(), 'graphql-transport-ws', { headers: upgradeHeaders });
    const messages: Json[] = [];
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`the socket was not closed within 10 s (messages: ${JSON.stringify(messages)})`));
    }, 10_000);
    socket.on('open', () => {
      const payload = authorization === undefined ? undefined : { authorization };
      socket.send(JSON.stringify({ type: 'connection_init', ...(payload ? { payload } : {}) }));
    });
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      messages.push(message);
      if (message.type === 'connection_ack') {
        // A failure of the check: let the operation show what it would have done, then hang up.
        socket.send(
          JSON.stringify({ id: '1', type: 'subscribe', payload: { query: operation.query, variables: operation.variables } }),
        );
        setTimeout(() => socket.close(1000), 2000).unref();
      }
      if (message.type === 'complete' || message.type === 'error') socket.close(1000);
    });
    socket.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString(), messages });
    });
    socket.on('error', () => undefined);
  });
}

interface Watch {
  results: Json[];
  errors: Json[];
  done: boolean;
  stop(): void;
}

/** One operation over a graphql-ws client, recording what comes back. */
function wsWatch(client: Client, call: GqlCall): Watch {
  const watch: Watch = { results: [], errors: [], done: false, stop: () => undefined };
  watch.stop = client.subscribe(
    { query: call.query, variables: call.variables },
    {
      next: (result) => {
        watch.results.push(result);
        if (result.errors) watch.errors.push(...result.errors);
      },
      error: (error) => {
        watch.errors.push(...(Array.isArray(error) ? error : [error]));
        watch.done = true;
      },
      complete: () => {
        watch.done = true;
      },
    },
  );
  return watch;
}

/** A query or mutation (or a refused subscription) over graphql-ws, as `{data, errors}`. */
async function wsExecute(client: Client, call: GqlCall): Promise<Json> {
  const watch = wsWatch(client, call);
  await until(() => watch.done, 'the operation to complete over graphql-ws', { timeoutMs: 15_000 });
  const last = watch.results.at(-1) ?? {};
  return { data: last.data, errors: watch.errors.length > 0 ? watch.errors.map(plainError) : undefined };
}

/** A GraphQL error as sent on the wire (the client hands over objects; some are Error instances). */
function plainError(error: Json): Json {
  return { message: error.message, extensions: error.extensions };
}

const wsClients = new Map<string, Client>();

function wsClientOf(user: TestUser): Client {
  let client = wsClients.get(user.token);
  if (!client) {
    client = createClient({
      url: wsUrl(),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: bearer(user) },
      retryAttempts: 0,
    });
    wsClients.set(user.token, client);
  }
  return client;
}

// ---------------------------------------------------------------------------------------------------------------
// Request bodies

const templateBody = (fileId: string, overrides: Record<string, unknown> = {}) => ({
  name: 'Matrix template',
  file_id: fileId,
  signers: [{ sign_type: 'suresign', elements: [signatureAt()] }],
  ...overrides,
});

/** An endpoint on the local receiver, for an event the matrix never causes: the only deliveries are its pings. */
const directLinkBody = (ids: Ids) => ({
  template_id: ids.template,
  enabled: true,
  sign_type: 'suresign',
  visitor_reason: 'Tenant',
});
/** Among the owner's embed origins (set up) and nobody else's. */
const OWNER_ONLY_ORIGIN = 'https://owner-only.example.com';
const webhookBody = () => ({ url: w.receiverUrl, events: ['esign.session.expired'], description: 'Matrix endpoint' });

const runtimeSigners = (overrides: Record<string, unknown> = {}) => [
  { full_name: 'Asha Rao', email: 'asha@example.com', reason: 'Tenant', ...overrides },
];

const imageElement = (value: string) => ({
  type: 'image',
  page: 0,
  x: 72,
  y: 100,
  width: 40,
  height: 20,
  alignment: 'left',
  value,
});

function pdfForm(): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(FOUR_PAGE_PDF)], { type: 'application/pdf' }), 'contract.pdf');
  return form;
}

function assetForm(): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(makePng(40, 20))], { type: 'image/png' }), 'sign.png');
  return form;
}

function pfxForm(): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(w.pfxBytes)]), 'seal.pfx');
  form.append('password', 'secret');
  return form;
}

/** A GraphQL mutation call made from a REST JSON body, the argument types read from the schema. */
function mutationFromBody(field: string, body: Record<string, unknown>, selection: string): GqlCall {
  const args = w.app.http.schema.getMutationType()!.getFields()[field].args;
  const used = Object.keys(body);
  const declared = used.map((name) => {
    const arg = args.find((candidate) => candidate.name === name);
    if (!arg) throw new Error(`${field} has no argument ${name}`);
    return `$${name}: ${String(arg.type)}`;
  });
  const passed = used.map((name) => `${name}: $${name}`);
  return {
    query: `mutation Op(${declared.join(', ')}) { ${field}(${passed.join(', ')}) ${selection} }`,
    variables: body,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Owner-side helpers (fresh resources for the calls that consume theirs, and snapshots)

async function ownerRest(call: RestCall): Promise<Json> {
  const answer = await restSend(call, bearer(w.owner));
  if (answer.status !== 200) throw new Error(`${call.method} ${call.path}: ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

async function ownerGql(call: GqlCall): Promise<Json> {
  const answer = await gqlSend(call, bearer(w.owner));
  if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors));
  return answer.body.data;
}

const freshSession = async (): Promise<Partial<Ids>> => {
  const session = await createSession(w.app, w.owner.token, sessionBody(w.ids.pdf));
  return { session: session.client_id, signer: session.signers[0].signer_id as string };
};
const freshTemplate = async (): Promise<Partial<Ids>> => ({
  template: (await ownerRest({ method: 'POST', path: '/templates/save', json: templateBody(w.ids.pdf) })).client_id,
});
const bulkBody = (ids: Ids) => ({
  template_id: ids.template,
  rows: [{ signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }] }],
});
const freshBulk = async (): Promise<Partial<Ids>> => ({
  bulk: (await ownerRest({ method: 'POST', path: '/esign/bulk-send', json: bulkBody(w.ids) })).client_id,
});
const tokenBody = () => ({ name: 'Matrix token', scopes: ['read'], expires_in: 3600 });
const freshToken = async (): Promise<Partial<Ids>> => ({
  token: (await ownerRest({ method: 'POST', path: '/tokens/create', json: tokenBody() })).client_id,
});
const freshPfx = async (): Promise<Partial<Ids>> => ({
  pfx: (await ownerRest({ method: 'POST', path: '/pfx/upload', form: pfxForm })).pfx_id,
});
const freshEndpoint = async (): Promise<Partial<Ids>> => ({
  endpoint: (await ownerRest({ method: 'POST', path: '/webhooks/create', json: webhookBody() })).endpoint_id,
});
/** A fresh endpoint with a delivered ping: redelivering it queues nothing in front of the fixture endpoint's pings. */
const freshEvent = async (): Promise<Partial<Ids>> => {
  const { endpoint } = await freshEndpoint();
  const ping = await ownerRest({ method: 'POST', path: '/webhooks/test', json: { endpoint_id: endpoint } });
  return { endpoint, event: ping.event_id };
};

/** Whether a check holds (an expectation that throws does not). */
const passes = (check: () => void): boolean => {
  try {
    check();
    return true;
  } catch {
    return false;
  }
};

/** How the owner sees a resource; a call by another user must leave it exactly so. */
const sessionSnapshot = () => ownerRest({ method: 'GET', path: '/esign/details', query: { client_id: w.ids.session } });
/** The owner's tokens as the owner lists them (a rotation or a revocation by someone else would show). */
const tokenSnapshot = async () =>
  (await ownerRest({ method: 'GET', path: '/tokens/list', query: { size: 100 } })).items.map((item: Json) => ({
    ...item,
    last_used_at: undefined,
  }));
const bulkSnapshot = () => ownerRest({ method: 'GET', path: '/esign/bulk-status', query: { client_id: w.ids.bulk } });
const templateSnapshot = () => ownerRest({ method: 'GET', path: '/templates/details', query: { client_id: w.ids.template } });
const pfxSnapshot = async () => (await ownerGql({ query: '{ pfxCertificates { pfx_id name subject } }' })).pfxCertificates;
/** The endpoint as its owner reads it, with its delivery log (a ping or a redelivery by someone else would show). */
const endpointSnapshot = async () => ({
  endpoint: await ownerRest({ method: 'GET', path: '/webhooks/details', query: { endpoint_id: w.ids.endpoint } }),
  deliveries: (
    await ownerRest({ method: 'GET', path: '/webhooks/deliveries', query: { endpoint_id: w.ids.endpoint, size: 100 } })
  ).items,
});

const itemIds = (items: Json[], key = 'client_id') => items.map((item) => item[key]);

// ---------------------------------------------------------------------------------------------------------------
// The operation tables

type ForeignExpectation =
  /** The operation names one of the owner's resources: it answers exactly as for an unknown id, and changes nothing. */
  | { refused: { status: number; message: string; code: string }; snapshot?: () => Promise<unknown> }
  /** It names none: it works on the caller's own data, and none of the owner's shows. */
  | { isolated: (data: Json) => void };

interface RestSpec {
  call: (ids: Ids) => RestCall;
  /** For a call that consumes its resource: a fresh one of the owner's, for the owner's case. */
  fresh?: () => Promise<Partial<Ids>>;
  owner: (data: Json, ids: Ids) => void;
  foreign: ForeignExpectation;
}

const ESIGN_NOT_FOUND = { status: 404, message: 'Esign client with the given client_id not found', code: 'not_found' };
const NOT_FOUND = { status: 404, message: 'not_found', code: 'not_found' };

function noneOfTheOwners(values: unknown[], kinds: (keyof Ids)[]): void {
  for (const kind of kinds) expect(values, `the owner's ${kind} leaked`).not.toContain(w.ids[kind]);
}

const REST: Record<string, RestSpec> = {
  'POST /files/upload-pdf': {
    call: () => ({ method: 'POST', path: '/files/upload-pdf', form: pdfForm }),
    owner: (data) => expect(data).toMatchObject({ user_id: w.owner.user_id, mime: 'application/pdf' }),
    foreign: { isolated: (data) => expect(data).toMatchObject({ user_id: w.other.user_id, mime: 'application/pdf' }) },
  },
  'POST /files/upload-asset': {
    call: () => ({ method: 'POST', path: '/files/upload-asset', form: assetForm }),
    owner: (data) => expect(data).toMatchObject({ user_id: w.owner.user_id, mime: 'image/png' }),
    foreign: { isolated: (data) => expect(data).toMatchObject({ user_id: w.other.user_id, mime: 'image/png' }) },
  },
  'GET /files/details': {
    call: (ids) => ({ method: 'GET', path: '/files/details', query: { client_id: ids.pdf } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.pdf, user_id: w.owner.user_id, kind: 'pdf' }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /files/list': {
    call: () => ({ method: 'GET', path: '/files/list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items)).toEqual(expect.arrayContaining([ids.pdf, ids.asset])),
    foreign: {
      isolated: (data) => {
        noneOfTheOwners(itemIds(data.items), ['pdf', 'asset']);
        for (const item of data.items) expect(item.user_id).toBe(w.other.user_id);
      },
    },
  },
  'POST /esign/initialize-esign': {
    call: (ids) => ({ method: 'POST', path: '/esign/initialize-esign', json: sessionBody(ids.pdf) }),
    owner: (data, ids) => expect(data).toMatchObject({ file_id: ids.pdf, status: 'pending' }),
    // The contract's code for a file_id that is not one of your PDFs (unknown or another user's).
    foreign: { refused: { status: 400, message: 'invalid_file_id', code: 'invalid_file_id' } },
  },
  'GET /esign/details': {
    call: (ids) => ({ method: 'GET', path: '/esign/details', query: { client_id: ids.session } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.session, status: 'pending' }),
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'GET /esign/download-pdf': {
    call: (ids) => ({ method: 'GET', path: '/esign/download-pdf', query: { client_id: ids.completed } }),
    owner: (data) => expect(data).toMatchObject({ url: expect.stringContaining('/downloads/'), expires_in: expect.any(Number) }),
    foreign: { refused: { status: 404, message: 'Esign not completed.', code: 'not_found' } },
  },
  'POST /esign/cancel': {
    call: (ids) => ({ method: 'POST', path: '/esign/cancel', json: { client_id: ids.session, reason: 'access matrix' } }),
    fresh: freshSession,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.session, status: 'cancelled' }),
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'POST /esign/resend-invite': {
    call: (ids) => ({ method: 'POST', path: '/esign/resend-invite', json: { client_id: ids.session, signer_id: ids.signer } }),
    fresh: freshSession,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.session, signer_id: ids.signer, messages: 1 }),
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'POST /esign/reassign-signer': {
    call: (ids) => ({
      method: 'POST',
      path: '/esign/reassign-signer',
      json: { client_id: ids.session, signer_id: ids.signer, full_name: 'Meera Iyer', email: 'meera@example.com' },
    }),
    fresh: freshSession,
    owner: (data, ids) =>
      expect(data.signers[0]).toMatchObject({ signer_id: ids.signer, full_name: 'Meera Iyer', status: 'pending' }),
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'GET /esign/list': {
    call: () => ({ method: 'GET', path: '/esign/list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items)).toEqual(expect.arrayContaining([ids.session, ids.completed])),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data.items), ['session', 'completed']) },
  },
  'GET /esign/audit': {
    call: (ids) => ({ method: 'GET', path: '/esign/audit', query: { client_id: ids.session } }),
    owner: (data, ids) => {
      expect(data.client_id).toBe(ids.session);
      expect(data.events.map((event: Json) => event.event)).toContain('session_created');
    },
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'GET /esign/field-values': {
    call: (ids) => ({ method: 'GET', path: '/esign/field-values', query: { client_id: ids.session } }),
    owner: (data, ids) => {
      expect(data.client_id).toBe(ids.session);
      expect(Array.isArray(data.fields)).toBe(true);
    },
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'GET /esign/documents': {
    call: (ids) => ({ method: 'GET', path: '/esign/documents', query: { client_id: ids.session } }),
    owner: (data) => {
      expect(data).toHaveLength(1);
      expect(data[0].document_id).toMatch(/^doc_/);
    },
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'GET /esign/verify': {
    call: (ids) => ({ method: 'GET', path: '/esign/verify', query: { client_id: ids.completed } }),
    owner: (data, ids) => {
      expect(data.client_id).toBe(ids.completed);
      // The one signature, then the document time-stamp the completion added (PADES_LTV).
      expect(data.signatures).toHaveLength(2);
      expect(data.signatures[1].field_name).toMatch(/^DocTimeStamp-/);
      expect(data.all_valid).toBe(true);
    },
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'POST /templates/save': {
    call: (ids) => ({ method: 'POST', path: '/templates/save', json: templateBody(ids.pdf) }),
    owner: (data, ids) => expect(data).toMatchObject({ file_id: ids.pdf, version: 1 }),
    foreign: { refused: NOT_FOUND },
  },
  'PUT /templates/update': {
    call: (ids) => ({ method: 'PUT', path: '/templates/update', json: { client_id: ids.template, folder: 'renamed' } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.template, folder: 'renamed' }),
    foreign: { refused: NOT_FOUND, snapshot: templateSnapshot },
  },
  'GET /templates/details': {
    call: (ids) => ({ method: 'GET', path: '/templates/details', query: { client_id: ids.template } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.template, file_id: ids.pdf }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /templates/list': {
    call: () => ({ method: 'GET', path: '/templates/list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items)).toContain(ids.template),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data.items), ['template']) },
  },
  'DELETE /templates/delete': {
    call: (ids) => ({ method: 'DELETE', path: '/templates/delete', query: { client_id: ids.template } }),
    fresh: freshTemplate,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.template, deleted_at: expect.any(String) }),
    foreign: { refused: NOT_FOUND, snapshot: templateSnapshot },
  },
  'POST /esign/initialize-from-template': {
    call: (ids) => ({
      method: 'POST',
      path: '/esign/initialize-from-template',
      json: { template_id: ids.template, signers: runtimeSigners() },
    }),
    owner: (data, ids) => expect(data).toMatchObject({ template_id: ids.template, status: 'pending' }),
    foreign: { refused: NOT_FOUND },
  },
  'POST /esign/bulk-send': {
    call: (ids) => ({ method: 'POST', path: '/esign/bulk-send', json: bulkBody(ids) }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: expect.stringMatching(/^bulk_/), template_id: ids.template }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /esign/bulk-status': {
    call: (ids) => ({ method: 'GET', path: '/esign/bulk-status', query: { client_id: ids.bulk } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.bulk, template_id: ids.template, row_count: 1 }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /esign/bulk-list': {
    call: () => ({ method: 'GET', path: '/esign/bulk-list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items)).toContain(ids.bulk),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data.items), ['bulk']) },
  },
  'GET /esign/bulk-rows': {
    call: (ids) => ({ method: 'GET', path: '/esign/bulk-rows', query: { client_id: ids.bulk } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.bulk, items: [{ position: 0 }] }),
    foreign: { refused: NOT_FOUND },
  },
  'POST /esign/bulk-cancel': {
    call: (ids) => ({ method: 'POST', path: '/esign/bulk-cancel', json: { client_id: ids.bulk } }),
    fresh: freshBulk,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.bulk, status: 'cancelled' }),
    foreign: { refused: NOT_FOUND, snapshot: bulkSnapshot },
  },
  'POST /pfx/upload': {
    call: () => ({ method: 'POST', path: '/pfx/upload', form: pfxForm }),
    owner: (data) => expect(data.pfx_id).toMatch(/^pfx_/),
    foreign: { isolated: (data) => expect(data.pfx_id).not.toBe(w.ids.pfx) },
  },
  'GET /stamps/states': {
    call: () => ({ method: 'GET', path: '/stamps/states' }),
    owner: (data) => expect(data.map((state: Json) => state.state_code)).toContain('MH'),
    foreign: { isolated: (data) => expect(data.map((state: Json) => state.state_code)).toContain('MH') },
  },
  'GET /stamps/articles': {
    call: () => ({ method: 'GET', path: '/stamps/articles', query: { state_code: 'MH' } }),
    owner: (data) => expect(data.length).toBeGreaterThan(0),
    foreign: { isolated: (data) => expect(data.length).toBeGreaterThan(0) },
  },
  'POST /stamps/create-order': {
    // The owner's order again, under the owner's Idempotency-Key: the owner gets that order back.
    call: () => ({ method: 'POST', path: '/stamps/create-order', json: w.orderBody, headers: { 'Idempotency-Key': w.orderKey } }),
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.order, user_id: w.owner.user_id }),
    // Keys are per user: another user's request with the same key is an order of theirs, never the owner's.
    foreign: {
      isolated: (data) => {
        expect(data.user_id).toBe(w.other.user_id);
        expect(data.client_id).not.toBe(w.ids.order);
      },
    },
  },
  'GET /stamps/order-status': {
    call: (ids) => ({ method: 'GET', path: '/stamps/order-status', query: { client_id: ids.order } }),
    owner: (data, ids) => {
      expect(data).toMatchObject({ client_id: ids.order, user_id: w.owner.user_id });
      expect(itemIds(data.stamps, 'stamp_id')).toContain(ids.stamp);
    },
    foreign: { refused: NOT_FOUND },
  },
  'GET /stamps/list': {
    // Filtered on the owner's order: the other user must get no item.
    call: (ids) => ({ method: 'GET', path: '/stamps/list', query: { page: 1, size: 100, client_id: ids.order } }),
    owner: (data, ids) => expect(itemIds(data.items)).toEqual([ids.order]),
    foreign: { isolated: (data) => expect(data.items).toEqual([]) },
  },
  'GET /esign/download-documents': {
    call: (ids) => ({ method: 'GET', path: '/esign/download-documents', query: { client_id: ids.completed } }),
    owner: (data, ids) => {
      expect(data).toMatchObject({ client_id: ids.completed, zip_url: expect.stringContaining('/downloads/') });
      expect(data.documents).toHaveLength(1);
      expect(data.documents[0]).toMatchObject({ position: 0, url: expect.stringContaining('/downloads/') });
    },
    foreign: { refused: { status: 404, message: 'Esign not completed.', code: 'not_found' } },
  },
  'GET /esign/download-certificate': {
    call: (ids) => ({ method: 'GET', path: '/esign/download-certificate', query: { client_id: ids.completed } }),
    owner: (data) => expect(data).toMatchObject({ url: expect.stringContaining('/downloads/'), expires_in: expect.any(Number) }),
    foreign: { refused: { status: 404, message: 'Esign not completed.', code: 'not_found' } },
  },
  'GET /stamps/download-pdf': {
    call: (ids) => ({ method: 'GET', path: '/stamps/download-pdf', query: { client_id: ids.stamp } }),
    owner: (data, ids) => expect(data).toMatchObject({ stamp_id: ids.stamp, url: expect.stringContaining('/downloads/') }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /stamps/instance': {
    call: (ids) => ({ method: 'GET', path: '/stamps/instance', query: { client_id: ids.stamp } }),
    // Other operations of the matrix reserve and release the stamp: its history starts the same whatever ran first.
    owner: (data, ids) => {
      expect(data).toMatchObject({ stamp_id: ids.stamp, order_id: ids.order });
      expect(data.history.slice(0, 2)).toMatchObject([
        { from_status: null, status: 'pending' },
        { from_status: 'pending', status: 'available' },
      ]);
      expect(data.history.at(-1).status).toBe(data.status);
    },
    foreign: { refused: NOT_FOUND },
  },
  'GET /wallet': {
    call: () => ({ method: 'GET', path: '/wallet' }),
    owner: (data) => {
      expect(data.user_id).toBe(w.owner.user_id);
      expect(itemIds(data.recent_entries, 'entry_id')).toContain(w.ledgerEntry);
    },
    foreign: {
      isolated: (data) => {
        expect(data.user_id).toBe(w.other.user_id);
        expect(data.balance).toBe('0.00');
        expect(itemIds(data.recent_entries, 'entry_id')).not.toContain(w.ledgerEntry);
      },
    },
  },
  'GET /wallet/ledger': {
    call: () => ({ method: 'GET', path: '/wallet/ledger', query: { size: 100 } }),
    owner: (data) => expect(itemIds(data.items, 'entry_id')).toContain(w.ledgerEntry),
    foreign: { isolated: (data) => expect(itemIds(data.items, 'entry_id')).not.toContain(w.ledgerEntry) },
  },
  'POST /webhooks/create': {
    call: () => ({ method: 'POST', path: '/webhooks/create', json: webhookBody() }),
    owner: (data) =>
      expect(data).toMatchObject({
        endpoint_id: expect.stringMatching(/^whk_/),
        url: w.receiverUrl,
        enabled: true,
        secret: expect.stringMatching(/^whsec_/),
      }),
    foreign: {
      isolated: (data) => {
        expect(data).toMatchObject({ endpoint_id: expect.stringMatching(/^whk_/), url: w.receiverUrl });
        expect(data.endpoint_id).not.toBe(w.ids.endpoint);
      },
    },
  },
  'GET /webhooks/list': {
    call: () => ({ method: 'GET', path: '/webhooks/list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items, 'endpoint_id')).toContain(ids.endpoint),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data.items, 'endpoint_id'), ['endpoint']) },
  },
  'GET /webhooks/details': {
    call: (ids) => ({ method: 'GET', path: '/webhooks/details', query: { endpoint_id: ids.endpoint } }),
    owner: (data, ids) => expect(data).toMatchObject({ endpoint_id: ids.endpoint, url: w.receiverUrl, enabled: true }),
    foreign: { refused: NOT_FOUND },
  },
  'PUT /webhooks/update': {
    // Disables it: on a fresh endpoint, so that the fixture stays enabled for the pings and redeliveries.
    call: (ids) => ({
      method: 'PUT',
      path: '/webhooks/update',
      json: { endpoint_id: ids.endpoint, enabled: false, description: 'paused' },
    }),
    fresh: freshEndpoint,
    owner: (data, ids) =>
      expect(data).toMatchObject({
        endpoint_id: ids.endpoint,
        enabled: false,
        disabled_reason: 'disabled by its owner',
        description: 'paused',
      }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'DELETE /webhooks/delete': {
    call: (ids) => ({ method: 'DELETE', path: '/webhooks/delete', query: { endpoint_id: ids.endpoint } }),
    fresh: freshEndpoint,
    owner: (data, ids) => expect(data).toEqual({ endpoint_id: ids.endpoint, deleted: true }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'POST /webhooks/rotate-secret': {
    call: (ids) => ({ method: 'POST', path: '/webhooks/rotate-secret', json: { endpoint_id: ids.endpoint } }),
    owner: (data, ids) =>
      expect(data).toMatchObject({
        endpoint_id: ids.endpoint,
        secret: expect.stringMatching(/^whsec_/),
        previous_secret_expires_at: expect.any(String),
      }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'POST /webhooks/test': {
    call: (ids) => ({ method: 'POST', path: '/webhooks/test', json: { endpoint_id: ids.endpoint } }),
    owner: (data, ids) =>
      expect(data).toMatchObject({
        endpoint_id: ids.endpoint,
        event_id: expect.stringMatching(/^evt_/),
        event_type: 'ping',
        status: 'succeeded',
      }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'GET /webhooks/deliveries': {
    // By event (the form by endpoint is in REST_FORMS).
    call: (ids) => ({ method: 'GET', path: '/webhooks/deliveries', query: { event_id: ids.event, size: 100 } }),
    owner: (data, ids) =>
      expect(data.items).toMatchObject([
        { endpoint_id: ids.endpoint, event_id: ids.event, event_type: 'ping', status: 'succeeded' },
      ]),
    foreign: { refused: NOT_FOUND },
  },
  'POST /webhooks/redeliver': {
    // One event (the form by endpoint and time is in REST_FORMS): a fresh one, alone in its endpoint's queue.
    call: (ids) => ({ method: 'POST', path: '/webhooks/redeliver', json: { event_id: ids.event } }),
    fresh: freshEvent,
    owner: (data) => expect(data).toEqual({ queued: 1 }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'POST /templates/direct-link': {
    call: (ids) => ({ method: 'POST', path: '/templates/direct-link', json: directLinkBody(ids) }),
    owner: (data, ids) =>
      expect(data).toMatchObject({ template_id: ids.template, enabled: true, url: expect.stringContaining('/d/') }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /templates/direct-link': {
    call: (ids) => ({ method: 'GET', path: '/templates/direct-link', query: { template_id: ids.template } }),
    owner: (data, ids) => expect(data).toMatchObject({ template_id: ids.template, client_id: expect.stringMatching(/^dlink_/) }),
    foreign: { refused: NOT_FOUND },
  },
  'GET /account/embed-origins': {
    call: () => ({ method: 'GET', path: '/account/embed-origins' }),
    owner: (data) => expect(data).toContain('https://app.example.com'),
    foreign: { isolated: (data) => expect(data).not.toContain(OWNER_ONLY_ORIGIN) },
  },
  'PUT /account/embed-origins': {
    // Sets the caller's own list: the other user's call changes the other user's list only.
    call: () => ({ method: 'PUT', path: '/account/embed-origins', json: { origins: ['https://app.example.com'] } }),
    owner: (data) => expect(data).toEqual(['https://app.example.com']),
    foreign: { isolated: (data) => expect(data).toEqual(['https://app.example.com']) },
  },
  'POST /tokens/create': {
    call: () => ({ method: 'POST', path: '/tokens/create', json: tokenBody() }),
    owner: (data) =>
      expect(data).toMatchObject({
        client_id: expect.stringMatching(/^tok_/),
        token: expect.stringMatching(/^esk_/),
        scopes: ['read'],
      }),
    foreign: { isolated: (data) => expect(data.client_id).not.toBe(w.ids.token) },
  },
  'GET /tokens/list': {
    call: () => ({ method: 'GET', path: '/tokens/list', query: { size: 100 } }),
    owner: (data, ids) => expect(itemIds(data.items, 'client_id')).toContain(ids.token),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data.items, 'client_id'), ['token']) },
  },
  'POST /tokens/rotate': {
    call: (ids) => ({ method: 'POST', path: '/tokens/rotate', json: { client_id: ids.token } }),
    fresh: freshToken,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.token, token: expect.stringMatching(/^esk_/) }),
    foreign: { refused: NOT_FOUND, snapshot: tokenSnapshot },
  },
  'POST /tokens/revoke': {
    call: (ids) => ({ method: 'POST', path: '/tokens/revoke', json: { client_id: ids.token } }),
    fresh: freshToken,
    owner: (data, ids) => expect(data).toMatchObject({ client_id: ids.token, revoked_at: expect.any(String) }),
    foreign: { refused: NOT_FOUND, snapshot: tokenSnapshot },
  },
  'POST /tokens/browser': {
    call: (ids) => ({ method: 'POST', path: '/tokens/browser', json: { resource_id: ids.session } }),
    owner: (data, ids) =>
      expect(data).toMatchObject({ kind: 'browser', resource_id: ids.session, token: expect.stringMatching(/^esk_/) }),
    foreign: { refused: ESIGN_NOT_FOUND },
  },
};

/**
 * The other argument forms of operations that the table above calls one way: run like its rows (another user,
 * the owner), keyed apart from it (the coverage checks compare the table with the app's routes).
 */
const REST_FORMS: Record<string, RestSpec> = {
  'GET /webhooks/deliveries (endpoint_id)': {
    call: (ids) => ({ method: 'GET', path: '/webhooks/deliveries', query: { endpoint_id: ids.endpoint, size: 100 } }),
    owner: (data, ids) => {
      expect(itemIds(data.items, 'event_id')).toContain(ids.event);
      for (const item of data.items) expect(item.endpoint_id).toBe(ids.endpoint);
    },
    foreign: { refused: NOT_FOUND },
  },
  'POST /webhooks/redeliver (endpoint_id, since)': {
    call: (ids) => ({
      method: 'POST',
      path: '/webhooks/redeliver',
      json: { endpoint_id: ids.endpoint, since: '2020-01-01T00:00:00.000Z' },
    }),
    // Every delivery to the receiver succeeded: no failed one to send again.
    owner: (data) => expect(data).toEqual({ queued: 0 }),
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
};

interface GqlSpec {
  call: (ids: Ids) => GqlCall;
  fresh?: () => Promise<Partial<Ids>>;
  /** `data[field]` of the owner's answer. */
  owner: (data: Json, ids: Ids) => void;
  foreign: ForeignExpectation;
  /** Uploads are multipart, HTTP only; subscriptions are graphql-ws only (HTTP refuses them, see below). */
  transport?: 'http' | 'ws';
  /** Subscriptions: makes the owner's fixture change so that an event is due. */
  trigger?: (ids: Ids, results: () => Json[]) => Promise<void>;
}

const byId =
  (field: string, selection: string, type = 'String!', arg = 'client_id') =>
  (id: string) => ({
    query: `query Op($id: ${type}) { ${field}(${arg}: $id) ${selection} }`,
    variables: { id },
  });

const GQL: Record<string, GqlSpec> = {
  'Query.file': {
    call: (ids) => byId('file', '{ client_id user_id kind }')(ids.pdf),
    owner: REST['GET /files/details'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.files': {
    call: () => ({ query: '{ files(size: 100) { items { client_id user_id } has_next } }' }),
    owner: REST['GET /files/list'].owner,
    foreign: REST['GET /files/list'].foreign,
  },
  'Query.me': {
    call: () => ({ query: '{ me { user_id email token_id } }' }),
    owner: (data) => expect(data).toMatchObject({ user_id: w.owner.user_id, token_id: w.owner.token_id }),
    foreign: { isolated: (data) => expect(data).toMatchObject({ user_id: w.other.user_id, token_id: w.other.token_id }) },
  },
  'Query.esignSession': {
    call: (ids) => byId('esignSession', '{ client_id status signers { signer_id } }')(ids.session),
    owner: REST['GET /esign/details'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Query.esignSessions': {
    call: () => ({ query: '{ esignSessions(size: 100) { items { client_id } } }' }),
    owner: REST['GET /esign/list'].owner,
    foreign: REST['GET /esign/list'].foreign,
  },
  'Query.esignDownloadUrl': {
    call: (ids) => byId('esignDownloadUrl', '{ url expires_in }')(ids.completed),
    owner: REST['GET /esign/download-pdf'].owner,
    foreign: { refused: { status: 404, message: 'Esign not completed.', code: 'not_found' } },
  },
  'Query.esignDocumentDownloads': {
    call: (ids) => byId('esignDocumentDownloads', '{ client_id documents { document_id position url } zip_url }')(ids.completed),
    owner: REST['GET /esign/download-documents'].owner,
    foreign: REST['GET /esign/download-documents'].foreign,
  },
  'Query.esignCompletionCertificateUrl': {
    call: (ids) => byId('esignCompletionCertificateUrl', '{ url expires_in }')(ids.completed),
    owner: REST['GET /esign/download-certificate'].owner,
    foreign: REST['GET /esign/download-certificate'].foreign,
  },
  'Query.template': {
    call: (ids) => byId('template', '{ client_id file_id version }')(ids.template),
    owner: REST['GET /templates/details'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.templates': {
    call: () => ({ query: '{ templates(size: 100) { items { client_id } } }' }),
    owner: REST['GET /templates/list'].owner,
    foreign: REST['GET /templates/list'].foreign,
  },
  'Query.stampStates': {
    call: () => ({ query: '{ stampStates { state_code name } }' }),
    owner: REST['GET /stamps/states'].owner,
    foreign: REST['GET /stamps/states'].foreign,
  },
  'Query.stampArticles': {
    call: () => ({ query: '{ stampArticles(state_code: "MH") { article_id name } }' }),
    owner: REST['GET /stamps/articles'].owner,
    foreign: REST['GET /stamps/articles'].foreign,
  },
  'Query.stampOrder': {
    call: (ids) => byId('stampOrder', '{ client_id user_id stamps { stamp_id status } }')(ids.order),
    owner: REST['GET /stamps/order-status'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.stampOrders': {
    call: (ids) => ({
      query: 'query Op($id: String) { stampOrders(page: 1, size: 100, client_id: $id) { items { client_id user_id } } }',
      variables: { id: ids.order },
    }),
    owner: REST['GET /stamps/list'].owner,
    foreign: REST['GET /stamps/list'].foreign,
  },
  'Query.stampPdf': {
    call: (ids) => byId('stampPdf', '{ stamp_id url expires_in }', 'String')(ids.stamp),
    owner: REST['GET /stamps/download-pdf'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.stampInstance': {
    call: (ids) => byId('stampInstance', '{ stamp_id order_id status history { from_status status } }', 'String')(ids.stamp),
    owner: REST['GET /stamps/instance'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.wallet': {
    call: () => ({ query: '{ wallet { user_id balance recent_entries { entry_id } } }' }),
    owner: REST['GET /wallet'].owner,
    foreign: REST['GET /wallet'].foreign,
  },
  'Query.walletLedger': {
    call: () => ({ query: '{ walletLedger(size: 100) { items { entry_id } } }' }),
    owner: REST['GET /wallet/ledger'].owner,
    foreign: REST['GET /wallet/ledger'].foreign,
  },
  'Query.pfxCertificates': {
    call: () => ({ query: '{ pfxCertificates { pfx_id } }' }),
    owner: (data, ids) => expect(itemIds(data, 'pfx_id')).toContain(ids.pfx),
    foreign: { isolated: (data) => noneOfTheOwners(itemIds(data, 'pfx_id'), ['pfx']) },
  },
  'Query.esignVerification': {
    call: (ids) => byId('esignVerification', '{ client_id all_valid signatures { field_name } }')(ids.completed),
    owner: REST['GET /esign/verify'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Query.esignDocuments': {
    call: (ids) => byId('esignDocuments', '{ document_id position }')(ids.session),
    owner: REST['GET /esign/documents'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Query.esignFieldValues': {
    call: (ids) => byId('esignFieldValues', '{ client_id fields { field_id value filled_by } }')(ids.session),
    owner: REST['GET /esign/field-values'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Query.esignAudit': {
    call: (ids) => byId('esignAudit', '{ client_id events { event } }')(ids.session),
    owner: REST['GET /esign/audit'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Query.notifications': {
    // Filtered on the owner's session (whose invite went to the outbox): another user's session is not_found.
    call: (ids) => ({
      query: 'query Op($id: String) { notifications(size: 100, client_id: $id) { items { id client_id kind } } }',
      variables: { id: ids.session },
    }),
    owner: (data, ids) => {
      expect(data.items.length).toBeGreaterThan(0);
      for (const item of data.items) expect(item.client_id).toBe(ids.session);
    },
    foreign: { refused: ESIGN_NOT_FOUND },
  },
  'Mutation.uploadPdf': {
    call: () => ({
      query: 'mutation Op($file: Upload!) { uploadPdf(file: $file) { client_id user_id mime } }',
      file: { bytes: FOUR_PAGE_PDF, filename: 'contract.pdf' },
    }),
    transport: 'http',
    owner: REST['POST /files/upload-pdf'].owner,
    foreign: REST['POST /files/upload-pdf'].foreign,
  },
  'Mutation.uploadAsset': {
    call: () => ({
      query: 'mutation Op($file: Upload!) { uploadAsset(file: $file) { client_id user_id mime } }',
      file: { bytes: makePng(40, 20), filename: 'sign.png' },
    }),
    transport: 'http',
    owner: REST['POST /files/upload-asset'].owner,
    foreign: REST['POST /files/upload-asset'].foreign,
  },
  'Mutation.initializeEsign': {
    call: (ids) => mutationFromBody('initializeEsign', sessionBody(ids.pdf), '{ client_id file_id status }'),
    owner: REST['POST /esign/initialize-esign'].owner,
    foreign: { refused: { status: 400, message: 'invalid_file_id', code: 'invalid_file_id' } },
  },
  'Mutation.cancelEsign': {
    call: (ids) => mutationFromBody('cancelEsign', { client_id: ids.session, reason: 'access matrix' }, '{ client_id status }'),
    fresh: freshSession,
    owner: REST['POST /esign/cancel'].owner,
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'Mutation.resendInvite': {
    call: (ids) =>
      mutationFromBody('resendInvite', { client_id: ids.session, signer_id: ids.signer }, '{ client_id signer_id messages }'),
    fresh: freshSession,
    owner: REST['POST /esign/resend-invite'].owner,
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'Mutation.reassignSigner': {
    call: (ids) =>
      mutationFromBody(
        'reassignSigner',
        { client_id: ids.session, signer_id: ids.signer, full_name: 'Meera Iyer', email: 'meera@example.com' },
        '{ client_id signers { signer_id full_name status } }',
      ),
    fresh: freshSession,
    owner: REST['POST /esign/reassign-signer'].owner,
    foreign: { refused: ESIGN_NOT_FOUND, snapshot: sessionSnapshot },
  },
  'Mutation.saveTemplate': {
    call: (ids) => mutationFromBody('saveTemplate', templateBody(ids.pdf), '{ client_id file_id version }'),
    owner: REST['POST /templates/save'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.updateTemplate': {
    call: (ids) => mutationFromBody('updateTemplate', { client_id: ids.template, folder: 'renamed' }, '{ client_id folder }'),
    owner: REST['PUT /templates/update'].owner,
    foreign: { refused: NOT_FOUND, snapshot: templateSnapshot },
  },
  'Mutation.deleteTemplate': {
    call: (ids) => mutationFromBody('deleteTemplate', { client_id: ids.template }, '{ client_id deleted_at }'),
    fresh: freshTemplate,
    owner: REST['DELETE /templates/delete'].owner,
    foreign: { refused: NOT_FOUND, snapshot: templateSnapshot },
  },
  'Mutation.initializeFromTemplate': {
    call: (ids) =>
      mutationFromBody(
        'initializeFromTemplate',
        { template_id: ids.template, signers: runtimeSigners() },
        '{ client_id template_id status }',
      ),
    owner: REST['POST /esign/initialize-from-template'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.bulk': {
    call: (ids) => byId('bulk', '{ client_id template_id row_count }', 'String')(ids.bulk),
    owner: REST['GET /esign/bulk-status'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.bulks': {
    call: () => ({ query: '{ bulks(size: 100) { items { client_id } } }' }),
    owner: REST['GET /esign/bulk-list'].owner,
    foreign: REST['GET /esign/bulk-list'].foreign,
  },
  'Query.bulkRows': {
    call: (ids) => byId('bulkRows', '{ client_id items { position } }', 'String')(ids.bulk),
    owner: REST['GET /esign/bulk-rows'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.bulkSend': {
    call: (ids) => mutationFromBody('bulkSend', bulkBody(ids), '{ client_id template_id }'),
    owner: REST['POST /esign/bulk-send'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.bulkSendCsv': {
    call: (ids) => ({
      query:
        'mutation Op($file: Upload!, $template: String) { bulkSendCsv(template_id: $template, file: $file) { client_id template_id } }',
      variables: { template: ids.template },
      file: { bytes: Buffer.from('signer_1_full_name,signer_1_email\r\nAsha Rao,asha@example.com\r\n'), filename: 'rows.csv' },
    }),
    transport: 'http',
    owner: REST['POST /esign/bulk-send'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.cancelBulk': {
    call: (ids) => mutationFromBody('cancelBulk', { client_id: ids.bulk }, '{ client_id status }'),
    fresh: freshBulk,
    owner: REST['POST /esign/bulk-cancel'].owner,
    foreign: { refused: NOT_FOUND, snapshot: bulkSnapshot },
  },
  'Mutation.createStampOrder': {
    call: () => mutationFromBody('createStampOrder', { ...w.orderBody, idempotency_key: w.orderKey }, '{ client_id user_id }'),
    owner: REST['POST /stamps/create-order'].owner,
    foreign: REST['POST /stamps/create-order'].foreign,
  },
  'Mutation.uploadPfx': {
    call: () => ({
      query: 'mutation Op($file: Upload!, $password: String!) { uploadPfx(file: $file, password: $password) { pfx_id } }',
      variables: { password: 'secret' },
      file: { bytes: w.pfxBytes, filename: 'seal.pfx' },
    }),
    transport: 'http',
    owner: REST['POST /pfx/upload'].owner,
    foreign: REST['POST /pfx/upload'].foreign,
  },
  'Mutation.deletePfx': {
    call: (ids) => mutationFromBody('deletePfx', { pfx_id: ids.pfx }, '{ pfx_id deleted_at }'),
    fresh: freshPfx,
    owner: (data, ids) => expect(data).toMatchObject({ pfx_id: ids.pfx, deleted_at: expect.any(String) }),
    foreign: { refused: NOT_FOUND, snapshot: pfxSnapshot },
  },
  'Subscription.esignSessionUpdated': {
    call: (ids) => ({
      query: 'subscription Op($id: String!) { esignSessionUpdated(client_id: $id) { client_id status } }',
      variables: { id: ids.session },
    }),
    transport: 'ws',
    fresh: freshSession,
    trigger: async (ids) => {
      await ownerRest({ method: 'POST', path: '/esign/cancel', json: { client_id: ids.session } });
    },
    owner: (data, ids) => expect(data).toEqual({ client_id: ids.session, status: 'cancelled' }),
    foreign: { refused: NOT_FOUND },
  },
  'Subscription.bulkUpdated': {
    call: (ids) => ({
      query: 'subscription Op($id: String!) { bulkUpdated(client_id: $id) { client_id status } }',
      variables: { id: ids.bulk },
    }),
    transport: 'ws',
    fresh: freshBulk,
    trigger: async (ids) => {
      await ownerRest({ method: 'POST', path: '/esign/bulk-cancel', json: { client_id: ids.bulk } });
    },
    owner: (data, ids) => expect(data).toEqual({ client_id: ids.bulk, status: 'cancelled' }),
    foreign: { refused: NOT_FOUND },
  },
  'Subscription.stampOrderUpdated': {
    call: (ids) => ({
      // The counts: a subscription sends an answer only when it differs from the one before it.
      query:
        'subscription Op($id: String!) { stampOrderUpdated(client_id: $id) { client_id user_id status_counts { reserved } } }',
      variables: { id: ids.order },
    }),
    transport: 'ws',
    // Reserving one of the order's stamps into a session moves the order; cancelling the session gives it back, once
    // the subscriber has heard the reservation (an event is read when it is delivered: had the cancel committed first,
    // both events would read the order as it started, and a subscription sends nothing that did not change).
    trigger: async (ids, results) => {
      const session = await ownerRest({
        method: 'POST',
        path: '/esign/initialize-esign',
        json: sessionBody(ids.pdf, { stamp: { stamp_instance_ids: [ids.stamp], mock: true } }),
      });
      await until(
        () => results().some((result) => result.data?.stampOrderUpdated?.status_counts?.reserved === 1),
        'the reservation to reach the subscriber',
      );
      await ownerRest({ method: 'POST', path: '/esign/cancel', json: { client_id: session.client_id } });
    },
    owner: (data, ids) =>
      expect(data).toEqual({ client_id: ids.order, user_id: w.owner.user_id, status_counts: { reserved: expect.any(Number) } }),
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.createWebhook': {
    call: () => mutationFromBody('createWebhook', webhookBody(), '{ endpoint_id url events enabled secret }'),
    owner: REST['POST /webhooks/create'].owner,
    foreign: REST['POST /webhooks/create'].foreign,
  },
  'Query.webhooks': {
    call: () => ({ query: '{ webhooks(size: 100) { items { endpoint_id } has_next } }' }),
    owner: REST['GET /webhooks/list'].owner,
    foreign: REST['GET /webhooks/list'].foreign,
  },
  'Query.webhook': {
    call: (ids) => byId('webhook', '{ endpoint_id url enabled }', 'String!', 'endpoint_id')(ids.endpoint),
    owner: REST['GET /webhooks/details'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.updateWebhook': {
    call: (ids) =>
      mutationFromBody(
        'updateWebhook',
        { endpoint_id: ids.endpoint, enabled: false, description: 'paused' },
        '{ endpoint_id enabled disabled_reason description }',
      ),
    fresh: freshEndpoint,
    owner: REST['PUT /webhooks/update'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'Mutation.deleteWebhook': {
    call: (ids) => mutationFromBody('deleteWebhook', { endpoint_id: ids.endpoint }, '{ endpoint_id deleted }'),
    fresh: freshEndpoint,
    owner: REST['DELETE /webhooks/delete'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'Mutation.rotateWebhookSecret': {
    call: (ids) =>
      mutationFromBody('rotateWebhookSecret', { endpoint_id: ids.endpoint }, '{ endpoint_id secret previous_secret_expires_at }'),
    owner: REST['POST /webhooks/rotate-secret'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'Mutation.testWebhook': {
    call: (ids) =>
      mutationFromBody('testWebhook', { endpoint_id: ids.endpoint }, '{ delivery_id endpoint_id event_id event_type status }'),
    owner: REST['POST /webhooks/test'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'Query.webhookDeliveries': {
    call: (ids) =>
      byId(
        'webhookDeliveries',
        '{ items { delivery_id endpoint_id event_id event_type status } has_next }',
        'String',
        'event_id',
      )(ids.event),
    owner: REST['GET /webhooks/deliveries'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.redeliverWebhooks': {
    call: (ids) => mutationFromBody('redeliverWebhooks', { event_id: ids.event }, '{ queued }'),
    fresh: freshEvent,
    owner: REST['POST /webhooks/redeliver'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
  'Mutation.setDirectLink': {
    call: (ids) => mutationFromBody('setDirectLink', directLinkBody(ids), '{ client_id template_id enabled url }'),
    owner: REST['POST /templates/direct-link'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.directLink': {
    call: (ids) => byId('directLink', '{ client_id template_id }', 'String', 'template_id')(ids.template),
    owner: REST['GET /templates/direct-link'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Query.embedOrigins': {
    call: () => ({ query: '{ embedOrigins }' }),
    owner: REST['GET /account/embed-origins'].owner,
    foreign: REST['GET /account/embed-origins'].foreign,
  },
  'Mutation.setEmbedOrigins': {
    call: () => mutationFromBody('setEmbedOrigins', { origins: ['https://app.example.com'] }, ''),
    owner: REST['PUT /account/embed-origins'].owner,
    foreign: REST['PUT /account/embed-origins'].foreign,
  },
  'Mutation.createToken': {
    call: () => mutationFromBody('createToken', tokenBody(), '{ client_id token scopes }'),
    owner: REST['POST /tokens/create'].owner,
    foreign: REST['POST /tokens/create'].foreign,
  },
  'Query.tokens': {
    call: () => ({ query: '{ tokens(size: 100) { items { client_id } has_next } }' }),
    owner: REST['GET /tokens/list'].owner,
    foreign: REST['GET /tokens/list'].foreign,
  },
  'Mutation.rotateToken': {
    call: (ids) => mutationFromBody('rotateToken', { client_id: ids.token }, '{ client_id token }'),
    fresh: freshToken,
    owner: REST['POST /tokens/rotate'].owner,
    foreign: { refused: NOT_FOUND, snapshot: tokenSnapshot },
  },
  'Mutation.revokeToken': {
    call: (ids) => mutationFromBody('revokeToken', { client_id: ids.token }, '{ client_id revoked_at }'),
    fresh: freshToken,
    owner: REST['POST /tokens/revoke'].owner,
    foreign: { refused: NOT_FOUND, snapshot: tokenSnapshot },
  },
  'Mutation.createBrowserToken': {
    call: (ids) => mutationFromBody('createBrowserToken', { resource_id: ids.session }, '{ kind resource_id token }'),
    owner: REST['POST /tokens/browser'].owner,
    foreign: { refused: ESIGN_NOT_FOUND },
  },
};

/** As REST_FORMS, for GraphQL: a key is the field's, then the form in parentheses. */
const GQL_FORMS: Record<string, GqlSpec> = {
  'Query.webhookDeliveries (endpoint_id)': {
    call: (ids) =>
      byId(
        'webhookDeliveries',
        '{ items { delivery_id endpoint_id event_id event_type status } has_next }',
        'String',
        'endpoint_id',
      )(ids.endpoint),
    owner: REST_FORMS['GET /webhooks/deliveries (endpoint_id)'].owner,
    foreign: { refused: NOT_FOUND },
  },
  'Mutation.redeliverWebhooks (endpoint_id, since)': {
    call: (ids) =>
      mutationFromBody('redeliverWebhooks', { endpoint_id: ids.endpoint, since: '2020-01-01T00:00:00.000Z' }, '{ queued }'),
    owner: REST_FORMS['POST /webhooks/redeliver (endpoint_id, since)'].owner,
    foreign: { refused: NOT_FOUND, snapshot: endpointSnapshot },
  },
};

/** The root field an entry of GQL or GQL_FORMS calls. */
const fieldOf = (name: string) => name.split(' ')[0].split('.')[1];

/**
 * Another user's ids inside a request body. Each case is sent by the other user three times: naming the
 * other user's own resource of that kind (must work: the call is valid), naming the owner's (refused), and
 * naming an unknown id (must answer exactly as for the owner's).
 * Not a case: templates/save takes a template signer's `pfx_id` without looking it up (the owner's and an unknown
 * one are saved alike, so nothing leaks); the session started from it checks it (the initialize-from-template case).
 */
interface ReferenceCase {
  kind: keyof World['otherIds'];
  field: string;
  body: (ref: string, own: World['otherIds']) => Record<string, unknown>;
  refused: { status: number; message: string; code: string };
}

const REFERENCE_CASES: Record<string, { rest: RestCall['method']; path: string } & ReferenceCase> = {
  'initialize-esign: file_id': {
    rest: 'POST',
    path: '/esign/initialize-esign',
    field: 'initializeEsign',
    kind: 'pdf',
    body: (ref) => sessionBody(ref),
    refused: { status: 400, message: 'invalid_file_id', code: 'invalid_file_id' },
  },
  'initialize-esign: an image element’s value': {
    rest: 'POST',
    path: '/esign/initialize-esign',
    field: 'initializeEsign',
    kind: 'asset',
    body: (ref, own) => sessionBody(own.pdf, { signers: [signerInput({ elements: [signatureAt(), imageElement(ref)] })] }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'initialize-esign: face_ref_file_id': {
    rest: 'POST',
    path: '/esign/initialize-esign',
    field: 'initializeEsign',
    kind: 'asset',
    body: (ref, own) => sessionBody(own.pdf, { signers: [signerInput({ face_ref_file_id: ref })] }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'initialize-esign: pfx_id': {
    rest: 'POST',
    path: '/esign/initialize-esign',
    field: 'initializeEsign',
    kind: 'pfx',
    body: (ref, own) => sessionBody(own.pdf, { sign_type: 'pfx', signers: [signerInput({ pfx_id: ref })] }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'initialize-esign: stamp.stamp_instance_ids': {
    rest: 'POST',
    path: '/esign/initialize-esign',
    field: 'initializeEsign',
    kind: 'stamp',
    body: (ref, own) => sessionBody(own.pdf, { stamp: { stamp_instance_ids: [ref], mock: true } }),
    refused: { status: 422, message: 'inventory_conflict', code: 'inventory_conflict' },
  },
  'templates/save: file_id': {
    rest: 'POST',
    path: '/templates/save',
    field: 'saveTemplate',
    kind: 'pdf',
    body: (ref) => templateBody(ref),
    refused: NOT_FOUND,
  },
  'templates/save: an image element’s value': {
    rest: 'POST',
    path: '/templates/save',
    field: 'saveTemplate',
    kind: 'asset',
    body: (ref, own) =>
      templateBody(own.pdf, { signers: [{ sign_type: 'suresign', elements: [signatureAt(), imageElement(ref)] }] }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'templates/update: file_id': {
    rest: 'PUT',
    path: '/templates/update',
    field: 'updateTemplate',
    kind: 'pdf',
    body: (ref, own) => ({ client_id: own.template, file_id: ref }),
    refused: NOT_FOUND,
  },
  'initialize-from-template: face_ref_file_id': {
    rest: 'POST',
    path: '/esign/initialize-from-template',
    field: 'initializeFromTemplate',
    kind: 'asset',
    body: (ref, own) => ({ template_id: own.template, signers: runtimeSigners({ face_ref_file_id: ref }) }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'initialize-from-template: pfx_id': {
    rest: 'POST',
    path: '/esign/initialize-from-template',
    field: 'initializeFromTemplate',
    kind: 'pfx',
    body: (ref, own) => ({ template_id: own.template, signers: runtimeSigners({ sign_type: 'pfx', pfx_id: ref }) }),
    refused: { status: 400, message: 'bad_request', code: 'bad_request' },
  },
  'initialize-from-template: stamp.stamp_instance_ids': {
    rest: 'POST',
    path: '/esign/initialize-from-template',
    field: 'initializeFromTemplate',
    kind: 'stamp',
    body: (ref, own) => ({
      template_id: own.template,
      signers: runtimeSigners(),
      stamp: { stamp_instance_ids: [ref], mock: true },
    }),
    refused: { status: 422, message: 'inventory_conflict', code: 'inventory_conflict' },
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Admin operations: on the owner's account, for an admin-scope token only

interface AdminSpec<C> {
  call: () => C;
  /** What the admin's answer must show (`data` for REST, `data[field]` for GraphQL). */
  admin: (data: Json) => void;
}

/** The owner's account as an admin reads it, with the owner's own wallet: a refused call must leave it as it was. */
const accountSnapshot = async () => {
  const asAdmin = async (path: string, query: Record<string, string | number>) => {
    const answer = await restSend({ method: 'GET', path, query }, bearer(w.admin));
    if (answer.status !== 200) throw new Error(`${path}: ${JSON.stringify(answer.body)}`);
    return answer.body.data;
  };
  return {
    wallet: await ownerRest({ method: 'GET', path: '/wallet' }),
    user: await asAdmin('/admin/users/details', { user_id: w.owner.user_id }),
    trail: await asAdmin('/admin/audit-trail', { user_id: w.owner.user_id, size: 100 }),
  };
};

const adjustmentBody = () => ({ user_id: w.owner.user_id, amount: '1.00', description: 'access matrix' });
const adjusted = (kind: string, amount: string) => (data: Json) =>
  expect(data).toMatchObject({
    user_id: w.owner.user_id,
    currency: 'INR',
    entry: { kind, amount, performed_by: w.admin.user_id, description: 'access matrix' },
  });
const ownersLedger = (data: Json) => {
  expect(data).toMatchObject({ user_id: w.owner.user_id, currency: 'INR' });
  expect(itemIds(data.items, 'entry_id')).toContain(w.ledgerEntry);
};
const feeSet = (data: Json) =>
  expect(data).toEqual({ user_id: w.owner.user_id, stamp_fee: '12.50', default_stamp_fee: '10.00', custom: true });
const ownerDetails = (data: Json) =>
  expect(data).toMatchObject({ user_id: w.owner.user_id, email: 'owner@example.com', currency: 'INR' });
/** The owner's trail holds at least the CLI credit of the set-up (no actor). */
const ownersTrail = (data: Json) =>
  expect(data.items).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ action: 'wallet_credited', user_id: w.owner.user_id, actor_user_id: null }),
    ]),
  );

/** Every configured ESP (here the built-in sandbox), never tried in this matrix. */
const espHealthListed = (data: Json) =>
  expect(data).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ backend: 'sandbox', version: '2.1', built_in: true, consecutive_failures: 0 }),
    ]),
  );

const ADMIN_REST: Record<string, AdminSpec<RestCall>> = {
  'POST /admin/wallet/credit': {
    call: () => ({ method: 'POST', path: '/admin/wallet/credit', json: adjustmentBody() }),
    admin: adjusted('credit', '1.00'),
  },
  'POST /admin/wallet/debit': {
    call: () => ({ method: 'POST', path: '/admin/wallet/debit', json: adjustmentBody() }),
    admin: adjusted('debit', '-1.00'),
  },
  'GET /admin/wallet/ledger': {
    call: () => ({ method: 'GET', path: '/admin/wallet/ledger', query: { user_id: w.owner.user_id, size: 100 } }),
    admin: ownersLedger,
  },
  'POST /admin/users/stamp-fee': {
    call: () => ({ method: 'POST', path: '/admin/users/stamp-fee', json: { user_id: w.owner.user_id, fee: '12.50' } }),
    admin: feeSet,
  },
  'GET /admin/users/details': {
    call: () => ({ method: 'GET', path: '/admin/users/details', query: { user_id: w.owner.user_id } }),
    admin: ownerDetails,
  },
  'GET /admin/audit-trail': {
    call: () => ({ method: 'GET', path: '/admin/audit-trail', query: { user_id: w.owner.user_id, size: 100 } }),
    admin: ownersTrail,
  },
  'GET /admin/esps': {
    call: () => ({ method: 'GET', path: '/admin/esps' }),
    admin: espHealthListed,
  },
};

const ADJUSTED_SELECTION = '{ user_id balance currency entry { entry_id kind amount description performed_by } }';
const byUser = (field: string, selection: string, page = false): GqlCall => ({
  query: page
    ? `query Op($id: String) { ${field}(user_id: $id, size: 100) ${selection} }`
    : `query Op($id: String) { ${field}(user_id: $id) ${selection} }`,
  variables: { id: w.owner.user_id },
});

const ADMIN_GQL: Record<string, AdminSpec<GqlCall>> = {
  'Mutation.adminCreditWallet': {
    call: () => mutationFromBody('adminCreditWallet', adjustmentBody(), ADJUSTED_SELECTION),
    admin: ADMIN_REST['POST /admin/wallet/credit'].admin,
  },
  'Mutation.adminDebitWallet': {
    call: () => mutationFromBody('adminDebitWallet', adjustmentBody(), ADJUSTED_SELECTION),
    admin: ADMIN_REST['POST /admin/wallet/debit'].admin,
  },
  'Query.adminWalletLedger': {
    call: () => byUser('adminWalletLedger', '{ user_id balance currency items { entry_id kind } has_next }', true),
    admin: ownersLedger,
  },
  'Mutation.adminSetStampFee': {
    call: () =>
      mutationFromBody(
        'adminSetStampFee',
        { user_id: w.owner.user_id, fee: '12.50' },
        '{ user_id stamp_fee default_stamp_fee custom }',
      ),
    admin: feeSet,
  },
  'Query.adminUser': {
    call: () => byUser('adminUser', '{ user_id email balance currency stamp_fee custom }'),
    admin: ownerDetails,
  },
  'Query.adminAuditTrail': {
    call: () => byUser('adminAuditTrail', '{ items { event_id action user_id actor_user_id details } has_next }', true),
    admin: ownersTrail,
  },
  'Query.adminEspHealth': {
    call: () => ({ query: 'query Op { adminEspHealth { backend version built_in state consecutive_failures } }', variables: {} }),
    admin: espHealthListed,
  },
};

/** Every operation, for the checks that treat them alike (coverage, refused credentials). */
const ALL_REST: Record<string, { call: (ids: Ids) => RestCall }> = { ...REST, ...ADMIN_REST };
const ALL_GQL: Record<string, { call: (ids: Ids) => GqlCall }> = { ...GQL, ...ADMIN_GQL };

/**
 * Cases where the service does not (yet) behave as this matrix requires: they run as `it.fails`, so that the
 * suite stays green and turns red (asking for the mark to go) the day the service is fixed.
 */
const KNOWN_DEVIATIONS: Record<string, string> = {};

const caseOf = (name: string) => (name in KNOWN_DEVIATIONS ? it.fails : it);

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: one app, one owner with one of everything, another user

async function procuredStamp(
  token: string,
  body: Record<string, unknown>,
  key: string,
): Promise<{ order: string; stamp: string }> {
  const created = await restSend(
    { method: 'POST', path: '/stamps/create-order', json: body, headers: { 'Idempotency-Key': key } },
    `Bearer ${token}`,
  );
  if (created.status !== 200) throw new Error(`create-order: ${JSON.stringify(created.body)}`);
  const order = created.body.data.client_id as string;
  let stamps: Json[] = [];
  await until(async () => {
    const status = await restSend(
      { method: 'GET', path: '/stamps/order-status', query: { client_id: order } },
      `Bearer ${token}`,
    );
    stamps = status.body.data.stamps;
    return status.body.data.status_counts.pending === 0;
  }, 'the mock order to be procured');
  const available = stamps.find((stamp) => stamp.status === 'available');
  if (!available) throw new Error(`no available stamp in ${JSON.stringify(stamps)}`);
  return { order, stamp: available.stamp_id };
}

/** The webhook receiver: answers 200 to anything. */
async function startReceiver(): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  receiver = server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

beforeAll(async () => {
  const receiverUrl = await startReceiver();
  // The receiver is on loopback: allowed, as in local development.
  const app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const em = () => app.services.orm.em.fork();
  const owner = await app.createUser('owner@example.com');
  const other = await app.createUser('other@example.com');
  w = { app, owner, other, pfxBytes: makePkcs12(), receiverUrl } as World;
  const operator = await app.createUser('operator@example.com');
  w.admin = {
    user_id: operator.user_id,
    ...(await issueAccessToken(em(), operator.user_id, { scope: 'admin', label: 'matrix: admin' })),
  };

  // The CLI's `tokens create --expires-in 4`: works now, expires during the set-up (which takes longer).
  const expiring = await issueAccessToken(em(), owner.user_id, { expiresInSeconds: 4, label: 'matrix: expires' });
  expect((await restSend({ method: 'GET', path: '/wallet' }, `Bearer ${expiring.token}`)).status).toBe(200);
  // The CLI's `tokens create` then `tokens revoke`.
  const revoked = await issueAccessToken(em(), owner.user_id, { label: 'matrix: revoked' });
  expect((await restSend({ method: 'GET', path: '/wallet' }, `Bearer ${revoked.token}`)).status).toBe(200);
  await revokeAccessToken(em(), revoked.token_id);
  w.expiredToken = expiring.token;
  w.revokedToken = revoked.token;

  // The CLI's `wallet credit`: one ledger entry of the owner's.
  w.ledgerEntry = (await creditWallet(em(), owner.user_id, 100_000n)).entry_id;

  const [pdf, asset] = await Promise.all([uploadPdf(app, owner.token), uploadAsset(app, owner.token)]);
  const pfx = (await restSend({ method: 'POST', path: '/pfx/upload', form: pfxForm }, bearer(owner))).body.data.pfx_id;
  // Invites are opt-in: this one goes to the outbox (no SMTP in tests), for the notifications query.
  const pending = await createSession(
    app,
    owner.token,
    sessionBody(pdf, { signers: [signerInput({ notification: { invite: true, completion: false, whatsapp: false } })] }),
  );
  const toComplete = await createSession(app, owner.token, sessionBody(pdf));
  const signed = await fetch(new URL('/signer-api/sign', app.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${toComplete.signers[0].token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ consent: true }),
  });
  if (signed.status !== 200) throw new Error(`signing failed: ${await signed.text()}`);
  const template = (await restSend({ method: 'POST', path: '/templates/save', json: templateBody(pdf) }, bearer(owner))).body.data
    .client_id;
  w.orderKey = `matrix-${randomBytes(8).toString('hex')}`;
  w.orderBody = {
    state_code: 'MH',
    article_id: 'MH-5',
    first_party_name: 'Asha Rao',
    second_party_name: 'Vikram Singh',
    stamp_duty_amount: 100,
    consideration_amount: 5000,
    quantity: 2,
    mock: true,
  };
  const [ownerStamps, otherStamps] = await Promise.all([
    procuredStamp(owner.token, w.orderBody, w.orderKey),
    procuredStamp(other.token, { ...w.orderBody, quantity: 1 }, `other-${w.orderKey}`),
  ]);
  // A webhook endpoint, and the event of a ping to it (delivered by the time the answer comes).
  const endpoint = (await ownerRest({ method: 'POST', path: '/webhooks/create', json: webhookBody() })).endpoint_id;
  const ping = await ownerRest({ method: 'POST', path: '/webhooks/test', json: { endpoint_id: endpoint } });
  if (ping.status !== 'succeeded') throw new Error(`the ping was not delivered: ${JSON.stringify(ping)}`);
  w.ids = {
    pdf,
    asset,
    session: pending.client_id,
    signer: pending.signers[0].signer_id,
    completed: toComplete.client_id,
    template,
    order: ownerStamps.order,
    stamp: ownerStamps.stamp,
    pfx,
    endpoint,
    event: ping.event_id,
    bulk: (await restSend({ method: 'POST', path: '/esign/bulk-send', json: bulkBody({ template } as Ids) }, bearer(owner))).body
      .data.client_id,
    token: (await restSend({ method: 'POST', path: '/tokens/create', json: tokenBody() }, bearer(owner))).body.data.client_id,
  };
  w.signerToken = pending.signers[0].token;
  await ownerRest({ method: 'POST', path: '/templates/direct-link', json: directLinkBody(w.ids) });
  await ownerRest({
    method: 'PUT',
    path: '/account/embed-origins',
    json: { origins: ['https://app.example.com', OWNER_ONLY_ORIGIN] },
  });
  w.scoped = {} as World['scoped'];
  for (const scope of NARROW_SCOPES) {
    const made = await ownerRest({ method: 'POST', path: '/tokens/create', json: { name: `matrix ${scope}`, scopes: [scope] } });
    w.scoped[scope] = { user_id: owner.user_id, token: made.token, token_id: made.client_id };
  }

  const otherPdf = await uploadPdf(app, other.token);
  w.otherIds = {
    pdf: otherPdf,
    asset: await uploadAsset(app, other.token),
    pfx: (await restSend({ method: 'POST', path: '/pfx/upload', form: pfxForm }, bearer(other))).body.data.pfx_id,
    stamp: otherStamps.stamp,
    template: (await restSend({ method: 'POST', path: '/templates/save', json: templateBody(otherPdf) }, bearer(other))).body.data
      .client_id,
  };

  // The invite of the pending session is in the owner's outbox.
  await until(async () => {
    const data = await ownerGql(GQL['Query.notifications'].call(w.ids));
    return data.notifications.items.length > 0;
  }, "the pending session's invite");
  await until(() => Date.now() > Date.parse(expiring.expires_at!) + 100, 'the expiring token to expire');
});

afterAll(async () => {
  await Promise.all([...wsClients.values()].map((client) => client.dispose()));
  await w?.app.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
});

// ---------------------------------------------------------------------------------------------------------------
// Coverage: the tables are the operations of the running app, no more, no fewer

describe('the matrix covers every operation of the running app', () => {
  it('REST: the table has exactly the routes of GET /api/v1/openapi.json, multipart ones as multipart', async () => {
    const response = await fetch(new URL('/api/v1/openapi.json', w.app.url));
    expect(response.status).toBe(200);
    const document = (await response.json()) as { paths: Record<string, Record<string, Json>> };
    const discovered = new Map<string, boolean>();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        // A route that takes JSON too (bulk-send: JSON rows or a CSV upload) is called here with JSON; its multipart
        // face checks the same template ownership (test/bulk/bulk-send.test.ts).
        const content = Object.keys(operation.requestBody?.content ?? {});
        const multipart = content.includes('multipart/form-data') && !content.includes('application/json');
        discovered.set(`${method.toUpperCase()} ${path.replace(/^\/api\/v1/, '')}`, multipart);
      }
    }
    expect(Object.keys(ALL_REST).sort()).toEqual([...discovered.keys()].sort());
    for (const [key, multipart] of discovered) {
      expect(!!ALL_REST[key]?.call(w.ids).form, `${key} is ${multipart ? '' : 'not '}multipart`).toBe(multipart);
    }
  });

  it('GraphQL: the table has exactly the Query, Mutation and Subscription root fields of the schema', () => {
    const schema = w.app.http.schema;
    const discovered = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
      type ? Object.keys(type.getFields()).map((field) => `${type.name}.${field}`) : [],
    );
    expect(Object.keys(ALL_GQL).sort()).toEqual(discovered.sort());
  });

  it('the GraphQL table calls each field by its name', () => {
    for (const [key, spec] of Object.entries({ ...ALL_GQL, ...GQL_FORMS })) {
      const field = fieldOf(key);
      expect(spec.call(w.ids).query, key).toMatch(new RegExp(`[{(\\s]${field}\\(|{ ${field} `));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Refused credentials

const refusedRows = <T>(table: Record<string, T>) =>
  Object.keys(REFUSED_CREDENTIALS).flatMap((credential) =>
    Object.keys(table).map((operation) => [credential, operation] as const),
  );

describe('REST: refused credentials answer 401 with the envelope', () => {
  it.each(refusedRows(ALL_REST))('%s: %s', async (credential, operation) => {
    const answer = await restSend(ALL_REST[operation].call(w.ids), REFUSED_CREDENTIALS[credential].authorization());
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ data: null, status_code: 401, message: 'unauthorized', success: false });
  });
});

describe('GraphQL over HTTP: refused credentials answer 401 with code unauthorized', () => {
  it.each(refusedRows(ALL_GQL))('%s: %s', async (credential, operation) => {
    const answer = await gqlSend(ALL_GQL[operation].call(w.ids), REFUSED_CREDENTIALS[credential].authorization());
    expect(answer.status).toBe(401);
    expect(answer.body.errors[0]).toMatchObject({ message: 'unauthorized', extensions: { code: 'unauthorized' } });
    expect(answer.body.data ?? null).toBeNull();
  });
});

describe('graphql-ws: refused credentials are closed with 4401 during connection_init', () => {
  it.each(refusedRows(ALL_GQL))('%s: %s', async (credential, operation) => {
    const { code, reason, messages } = await wsHandshake(
      REFUSED_CREDENTIALS[credential].authorization(),
      ALL_GQL[operation].call(w.ids),
    );
    expect(messages).toEqual([]);
    expect({ code, reason }).toEqual({ code: 4401, reason: 'unauthorized' });
  });

  it("the owner's token in the upgrade request's Authorization header only (connection_init without it) is closed too", async () => {
    const { code, messages } = await wsHandshake(undefined, GQL['Query.me'].call(w.ids), { authorization: bearer(w.owner) });
    expect(messages).toEqual([]);
    expect(code).toBe(4401);
  });
});

describe('signer API: integrator (esk_) tokens are refused on every route', () => {
  const routes = () => {
    const router = createSignerApi(w.app.services) as unknown as {
      stack: { route?: { path: string; methods: Record<string, boolean> } }[];
    };
    return router.stack.flatMap((layer) =>
      layer.route ? Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${layer.route!.path}`) : [],
    );
  };
  const KNOWN_SIGNER_ROUTES = [
    'GET /session',
    'GET /document',
    'POST /language',
    'POST /otp/send',
    'POST /otp/verify',
    'POST /location',
    'POST /face',
    'POST /fields',
    'POST /fields/:field_id/image',
    'POST /esp/start',
    'POST /dsc/start',
    'POST /dsc/complete',
    'POST /sign',
    'POST /decline',
    'POST /delegate',
  ];

  it('the table has exactly the routes of the signer API router', () => {
    expect([...KNOWN_SIGNER_ROUTES].sort()).toEqual(routes().sort());
  });

  it("the signer's own token opens it (the control)", async () => {
    const response = await fetch(new URL('/signer-api/session', w.app.url), {
      headers: { authorization: `Bearer ${w.signerToken}` },
    });
    expect(response.status).toBe(200);
  });

  const rows = KNOWN_SIGNER_ROUTES.flatMap((route) => [
    ["the owner's access token", route] as const,
    ["another user's access token", route] as const,
  ]);
  it.each(rows)('%s: %s', async (who, route) => {
    const [method, path] = route.split(' ');
    const token = who.startsWith('the owner') ? w.owner.token : w.other.token;
    const response = await fetch(new URL(`/signer-api${path}`, w.app.url), {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': path === '/face' ? 'image/png' : 'application/json' },
      body:
        method === 'GET'
          ? undefined
          : path === '/face'
            ? new Uint8Array(makePng(20, 20))
            : JSON.stringify({ consent: true, reason: 'not mine', full_name: 'Ravi Kumar', language: 'hi' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ data: null, status_code: 401, message: 'unauthorized', success: false });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Another user

async function expectForeignRest(name: string, spec: RestSpec): Promise<void> {
  const before = 'refused' in spec.foreign ? await spec.foreign.snapshot?.() : undefined;
  const answer = await restSend(spec.call(w.ids), bearer(w.other));
  if ('isolated' in spec.foreign) {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    spec.foreign.isolated(answer.body.data);
    return;
  }
  const { status, message } = spec.foreign.refused;
  expect(answer.body, name).toMatchObject({ data: null, status_code: status, message, success: false });
  expect(answer.status).toBe(status);
  // Exactly the answer an unknown id gets: nothing tells the owner's resource exists.
  const unknown = unknownIds();
  const probe = await restSend(spec.call(unknown), bearer(w.other));
  expect(normalized(answer.body, w.ids)).toEqual(normalized(probe.body, unknown));
  expect(probe.status).toBe(answer.status);
  if (spec.foreign.snapshot) expect(await spec.foreign.snapshot()).toEqual(before);
}

/** A GraphQL answer reduced to what a client can tell apart: the data and the errors' messages and codes. */
function gqlOutcome(body: Json): Json {
  return {
    data: body.data ?? null,
    errors: (body.errors ?? []).map((error: Json) => ({ message: error.message, code: error.extensions?.code })),
  };
}

async function expectForeignGql(name: string, spec: GqlSpec, run: (call: GqlCall) => Promise<Json>): Promise<void> {
  const field = fieldOf(name);
  const before = 'refused' in spec.foreign ? await spec.foreign.snapshot?.() : undefined;
  const body = await run(spec.call(w.ids));
  if ('isolated' in spec.foreign) {
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    spec.foreign.isolated(body.data[field]);
    return;
  }
  expect(body.errors?.[0]?.extensions?.code, JSON.stringify(body)).toBe(spec.foreign.refused.code);
  expect(body.data?.[field] ?? null).toBeNull();
  const unknown = unknownIds();
  const probe = await run(spec.call(unknown));
  expect(normalized(gqlOutcome(body), w.ids)).toEqual(normalized(gqlOutcome(probe), unknown));
  if (spec.foreign.snapshot) expect(await spec.foreign.snapshot()).toEqual(before);
}

describe("another user's token: the owner's resources answer like unknown ones, lists show none of them", () => {
  describe('REST', () => {
    for (const [name, spec] of Object.entries({ ...REST, ...REST_FORMS }))
      caseOf(`REST ${name}`)(name, () => expectForeignRest(name, spec));
  });

  describe('GraphQL over HTTP', () => {
    for (const [name, spec] of Object.entries({ ...GQL, ...GQL_FORMS })) {
      if (spec.transport === 'ws') continue;
      caseOf(`HTTP ${name}`)(name, () =>
        expectForeignGql(name, spec, async (call) => (await gqlSend(call, bearer(w.other))).body),
      );
    }
  });

  describe('graphql-ws', () => {
    for (const [name, spec] of Object.entries({ ...GQL, ...GQL_FORMS })) {
      if (spec.transport === 'http') continue;
      caseOf(`ws ${name}`)(name, () => expectForeignGql(name, spec, (call) => wsExecute(wsClientOf(w.other), call)));
    }
  });

  describe("references to the owner's resources inside a request body", () => {
    const rows = Object.keys(REFERENCE_CASES).flatMap((name) => [['REST', name] as const, ['GraphQL', name] as const]);
    for (const [face, name] of rows) {
      caseOf(`${face} ${name}`)(`${face}: ${name}`, async () => {
        const spec = REFERENCE_CASES[name];
        const send = async (ref: string): Promise<Json> => {
          const body = spec.body(ref, w.otherIds);
          if (face === 'REST') return (await restSend({ method: spec.rest, path: spec.path, json: body }, bearer(w.other))).body;
          const answer = (await gqlSend(mutationFromBody(spec.field, body, '{ client_id }'), bearer(w.other))).body;
          return gqlOutcome(answer);
        };
        // The control: the same call naming the caller's own resource is valid.
        const own = await send(w.otherIds[spec.kind]);
        const created = face === 'REST' ? own.data : own.data?.[spec.field];
        expect(created?.client_id, JSON.stringify(own)).toMatch(/^(esign|template)_/);
        if (created.client_id.startsWith('esign_')) {
          // Gives a reserved stamp back for the next case.
          await restSend({ method: 'POST', path: '/esign/cancel', json: { client_id: created.client_id } }, bearer(w.other));
        }
        const refused = await send(w.ids[spec.kind]);
        if (face === 'REST') {
          expect(refused).toMatchObject({
            data: null,
            status_code: spec.refused.status,
            message: spec.refused.message,
            success: false,
          });
        } else {
          expect(refused.errors[0]?.code, JSON.stringify(refused)).toBe(spec.refused.code);
          expect(refused.data).toBeNull();
        }
        const unknown = unknownIds();
        expect(normalized(refused, w.ids)).toEqual(normalized(await send(unknown[spec.kind]), unknown));
      });
    }
  });

  it('unfiltered lists of another user show none of the owner’s orders or outbox messages either', async () => {
    const orders = await restSend({ method: 'GET', path: '/stamps/list', query: { page: 1, size: 100 } }, bearer(w.other));
    expect(orders.status).toBe(200);
    noneOfTheOwners(itemIds(orders.body.data.items), ['order']);
    for (const item of orders.body.data.items) expect(item.user_id).toBe(w.other.user_id);
    const graphql = await gqlSend(
      {
        query:
          '{ notifications(size: 100) { items { client_id } } stampOrders(page: 1, size: 100) { items { client_id user_id } } }',
      },
      bearer(w.other),
    );
    expect(graphql.body.errors).toBeUndefined();
    noneOfTheOwners(itemIds(graphql.body.data.notifications.items), ['session', 'completed']);
    noneOfTheOwners(itemIds(graphql.body.data.stampOrders.items), ['order']);
    for (const item of graphql.body.data.stampOrders.items) expect(item.user_id).toBe(w.other.user_id);
  });

  it('subscriptions refused to another user never deliver the owner’s events', async () => {
    const fresh = (await freshSession()).session!;
    const ids = { ...w.ids, session: fresh };
    const intruder = wsClientOf(w.other);
    const owner = wsClientOf(w.owner);
    const intruding = [GQL['Subscription.esignSessionUpdated'], GQL['Subscription.stampOrderUpdated']].map((spec) =>
      wsWatch(intruder, spec.call(ids)),
    );
    const watching = [GQL['Subscription.esignSessionUpdated'], GQL['Subscription.stampOrderUpdated']].map((spec) =>
      wsWatch(owner, spec.call(ids)),
    );
    // Both sides are live before the changes: the intruder refused (which ends its subscription: nothing can follow),
    // the owner's subscriptions started with their current state.
    await until(() => intruding.every((watch) => watch.errors.length > 0), "the intruder's refusals");
    await until(() => watching.every((watch) => watch.results.length > 0), "the owner's starting states");
    await GQL['Subscription.stampOrderUpdated'].trigger!(ids, () => watching[1]!.results);
    await GQL['Subscription.esignSessionUpdated'].trigger!(ids, () => watching[0]!.results);
    // The session's cancellation follows its starting state (the order's selected fields may read the same after the
    // reservation, and an unchanged answer is not sent again).
    await until(() => watching[0]!.results.length > 1, "the owner's session event");
    for (const watch of [...intruding, ...watching]) watch.stop();
    for (const watch of intruding) {
      expect(watch.errors.map(plainError)).toMatchObject([{ extensions: { code: 'not_found' } }]);
      expect(watch.results.filter((result) => result.data)).toEqual([]);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The owner

describe("the owner's token succeeds", () => {
  describe('REST', () => {
    for (const [name, spec] of Object.entries({ ...REST, ...REST_FORMS })) {
      caseOf(`owner REST ${name}`)(name, async () => {
        const ids = { ...w.ids, ...(await spec.fresh?.()) };
        const answer = await restSend(spec.call(ids), bearer(w.owner));
        expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status_code: 200, message: 'Success', success: true });
        expect(answer.status).toBe(200);
        spec.owner(answer.body.data, ids);
      });
    }
  });

  describe('GraphQL over HTTP', () => {
    for (const [name, spec] of Object.entries({ ...GQL, ...GQL_FORMS })) {
      const field = fieldOf(name);
      if (spec.transport === 'ws') {
        // Subscriptions are served over graphql-ws only: HTTP refuses them alike for any id (nothing leaks).
        caseOf(`owner HTTP ${name}`)(`${name} is refused over HTTP (graphql-ws only), for the owner as for anyone`, async () => {
          const [mine, theirs] = await Promise.all([
            gqlSend(spec.call(w.ids), bearer(w.owner)),
            gqlSend(spec.call(w.ids), bearer(w.other)),
          ]);
          expect(mine.status).toBe(400);
          expect(mine.body.errors[0].extensions.code).toBe('bad_request');
          expect(theirs).toEqual(mine);
        });
        continue;
      }
      caseOf(`owner HTTP ${name}`)(name, async () => {
        const ids = { ...w.ids, ...(await spec.fresh?.()) };
        const answer = await gqlSend(spec.call(ids), bearer(w.owner));
        expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
        expect(answer.status).toBe(200);
        spec.owner(answer.body.data[field], ids);
      });
    }
  });

  describe('graphql-ws', () => {
    for (const [name, spec] of Object.entries({ ...GQL, ...GQL_FORMS })) {
      if (spec.transport === 'http') continue;
      const field = fieldOf(name);
      caseOf(`owner ws ${name}`)(name, async () => {
        const ids = { ...w.ids, ...(await spec.fresh?.()) };
        if (!spec.trigger) {
          const answer = await wsExecute(wsClientOf(w.owner), spec.call(ids));
          expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
          spec.owner(answer.data[field], ids);
          return;
        }
        const watch = wsWatch(wsClientOf(w.owner), spec.call(ids));
        // A subscription starts with the resource as it reads now, then sends its changes.
        await until(() => watch.results.length > 0 || watch.done, `the starting state of ${name}`);
        const before = watch.results.length;
        await spec.trigger(ids, () => watch.results);
        // The event the trigger causes; a resource that moves by itself (a bulk working its rows) may send others first.
        const expected = () => watch.results.slice(before).find((result) => passes(() => spec.owner(result.data?.[field], ids)));
        await until(() => expected() !== undefined || watch.done, `an event of ${name}`);
        watch.stop();
        expect(watch.errors).toEqual([]);
        spec.owner((expected() ?? watch.results.at(-1)).data[field], ids);
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Admin operations

describe('admin operations: user tokens get 403 forbidden and change nothing; an admin token succeeds', () => {
  const USER_TOKENS = { "the owner's own token": () => w.owner, "another user's token": () => w.other };

  describe('REST', () => {
    for (const [name, spec] of Object.entries(ADMIN_REST)) {
      for (const [who, user] of Object.entries(USER_TOKENS)) {
        caseOf(`${who} REST ${name}`)(`${who}: ${name}`, async () => {
          const before = await accountSnapshot();
          const answer = await restSend(spec.call(), bearer(user()));
          expect(answer.status, JSON.stringify(answer.body)).toBe(403);
          expect(answer.body).toEqual({ data: null, status_code: 403, message: 'forbidden', success: false });
          expect(await accountSnapshot()).toEqual(before);
        });
      }
      caseOf(`admin REST ${name}`)(`an admin token: ${name}`, async () => {
        const answer = await restSend(spec.call(), bearer(w.admin));
        expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status_code: 200, message: 'Success', success: true });
        expect(answer.status).toBe(200);
        spec.admin(answer.body.data);
      });
    }
  });

  const transports = {
    'GraphQL over HTTP': async (user: TestUser, call: GqlCall) => (await gqlSend(call, bearer(user))).body,
    'graphql-ws': (user: TestUser, call: GqlCall) => wsExecute(wsClientOf(user), call),
  };
  for (const [transport, run] of Object.entries(transports)) {
    describe(transport, () => {
      for (const [name, spec] of Object.entries(ADMIN_GQL)) {
        const field = fieldOf(name);
        for (const [who, user] of Object.entries(USER_TOKENS)) {
          caseOf(`${who} ${transport} ${name}`)(`${who}: ${name}`, async () => {
            const before = await accountSnapshot();
            const body = await run(user(), spec.call());
            expect(body.errors?.[0], JSON.stringify(body)).toMatchObject({
              message: 'forbidden',
              extensions: { code: 'forbidden' },
            });
            expect(body.data?.[field] ?? null).toBeNull();
            expect(await accountSnapshot()).toEqual(before);
          });
        }
        caseOf(`admin ${transport} ${name}`)(`an admin token: ${name}`, async () => {
          const body = await run(w.admin, spec.call());
          expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
          spec.admin(body.data[field]);
        });
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Token scopes (issue 34, docs/tokens.md)

const NARROW_SCOPES = ['read', 'sessions', 'stamps', 'webhooks'] as const;
type NarrowScope = (typeof NARROW_SCOPES)[number];
type Domain = 'sessions' | 'stamps' | 'webhooks' | 'any' | 'account';

/** Each GraphQL root field's part of the API, as docs/tokens.md lists them (written out here, not read from the app). */
const FIELD_DOMAINS: Record<Domain, string[]> = {
  sessions: [
    'file',
    'files',
    'uploadPdf',
    'uploadAsset',
    'esignAudit',
    'notifications',
    'pfxCertificates',
    'uploadPfx',
    'deletePfx',
    'esignSession',
    'esignSessions',
    'esignDownloadUrl',
    'esignCompletionCertificateUrl',
    'esignDocumentDownloads',
    'esignDocuments',
    'esignFieldValues',
    'esignVerification',
    'initializeEsign',
    'cancelEsign',
    'resendInvite',
    'reassignSigner',
    'esignSessionUpdated',
    'template',
    'templates',
    'saveTemplate',
    'updateTemplate',
    'deleteTemplate',
    'initializeFromTemplate',
    'setDirectLink',
    'directLink',
    'bulk',
    'bulks',
    'bulkRows',
    'bulkSend',
    'bulkSendCsv',
    'cancelBulk',
    'bulkUpdated',
    // The matrix mints its browser token for a session: following a session is a sessions read.
    'createBrowserToken',
  ],
  stamps: [
    'wallet',
    'walletLedger',
    'stampStates',
    'stampArticles',
    'stampOrder',
    'stampOrders',
    'stampPdf',
    'stampInstance',
    'createStampOrder',
    'stampOrderUpdated',
  ],
  webhooks: [
    'webhooks',
    'webhook',
    'webhookDeliveries',
    'createWebhook',
    'updateWebhook',
    'deleteWebhook',
    'rotateWebhookSecret',
    'testWebhook',
    'redeliverWebhooks',
  ],
  any: ['me', 'embedOrigins'],
  account: ['createToken', 'tokens', 'rotateToken', 'revokeToken', 'setEmbedOrigins'],
};
const domainOfField = (field: string): Domain => {
  const found = (Object.keys(FIELD_DOMAINS) as Domain[]).find((domain) => FIELD_DOMAINS[domain].includes(field));
  if (!found) throw new Error(`${field}: no part of the API in FIELD_DOMAINS`);
  return found;
};
/** A REST route's part of the API, by its path. */
const domainOfPath = (path: string, method: string): Domain =>
  path === '/account/embed-origins'
    ? method === 'GET'
      ? 'any'
      : 'account'
    : path === '/tokens/browser'
      ? 'sessions'
      : /^\/(esign|templates|files|pfx)\//.test(path)
        ? 'sessions'
        : /^\/(stamps|wallet)(\/|$)/.test(path)
          ? 'stamps'
          : path.startsWith('/webhooks/')
            ? 'webhooks'
            : 'account';

/** docs/tokens.md: a scope allows its own part, `read` every query and subscription, `any` every token. */
function allows(scope: NarrowScope, domain: Domain, kind: 'query' | 'mutation' | 'subscription'): boolean {
  if (domain === 'any') return true;
  if (domain === 'account') return false;
  return scope === domain || (scope === 'read' && kind !== 'mutation');
}

describe('token scopes: an operation outside a token’s scopes answers 403 naming the scope; inside them it works', () => {
  it('every root field has its part of the API in the table', () => {
    const schema = w.app.http.schema;
    for (const type of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      for (const field of Object.keys(type!.getFields())) if (!field.startsWith('admin')) domainOfField(field);
    }
  });

  describe('REST', () => {
    for (const [name, spec] of Object.entries({ ...REST, ...REST_FORMS })) {
      const [method, path] = name.split(' ') as [string, string];
      for (const scope of NARROW_SCOPES) {
        // Minting a browser token for a session reads that session (docs/tokens.md).
        const kind = method === 'GET' || path === '/tokens/browser' ? 'query' : 'mutation';
        const allowed = allows(scope, domainOfPath(path, method), kind);
        caseOf(`scope ${scope} REST ${name}`)(`${scope}: ${name} ${allowed ? 'works' : 'is 403'}`, async () => {
          const ids = { ...w.ids, ...(allowed ? await spec.fresh?.() : {}) };
          const answer = await restSend(spec.call(ids), bearer(w.scoped[scope]));
          if (allowed) {
            expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status_code: 200, success: true });
            return;
          }
          expect(answer.status, JSON.stringify(answer.body)).toBe(403);
          expect(answer.body).toMatchObject({ status_code: 403, message: 'forbidden', success: false });
          expect(answer.body.errors[0]).toMatchObject({
            field: 'scope',
            problem: expect.stringContaining(`this token has ${scope}`),
          });
        });
      }
    }
    for (const [name, spec] of Object.entries(ADMIN_REST)) {
      for (const scope of NARROW_SCOPES) {
        caseOf(`scope ${scope} REST ${name}`)(`${scope}: ${name} is 403`, async () => {
          const answer = await restSend(spec.call(), bearer(w.scoped[scope]));
          expect(answer.status).toBe(403);
        });
      }
    }
  });

  const transports = {
    'GraphQL over HTTP': async (user: TestUser, call: GqlCall) => (await gqlSend(call, bearer(user))).body,
    'graphql-ws': (user: TestUser, call: GqlCall) => wsExecute(wsClientOf(user), call),
  };
  for (const [transport, run] of Object.entries(transports)) {
    describe(transport, () => {
      for (const [name, spec] of Object.entries({ ...GQL, ...GQL_FORMS })) {
        if (spec.transport === (transport === 'graphql-ws' ? 'http' : 'ws')) continue;
        const field = fieldOf(name);
        const kind =
          name.startsWith('Query.') || field === 'createBrowserToken'
            ? 'query'
            : name.startsWith('Mutation.')
              ? 'mutation'
              : 'subscription';
        for (const scope of NARROW_SCOPES) {
          const allowed = allows(scope, domainOfField(field), kind);
          caseOf(`scope ${scope} ${transport} ${name}`)(`${scope}: ${name} ${allowed ? 'works' : 'is 403'}`, async () => {
            const ids = { ...w.ids, ...(allowed ? await spec.fresh?.() : {}) };
            if (allowed && kind === 'subscription') {
              // A subscription starts with the resource as it reads now.
              const watch = wsWatch(wsClientOf(w.scoped[scope]), spec.call(ids));
              await until(() => watch.results.length > 0 || watch.done, `the starting state of ${name}`);
              watch.stop();
              expect(watch.errors).toEqual([]);
              expect(watch.results[0].data[field]).toBeTruthy();
              return;
            }
            const body = await run(w.scoped[scope], spec.call(ids));
            if (allowed) {
              expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
              expect(body.data[field]).toBeDefined();
              return;
            }
            expect(body.errors?.[0], JSON.stringify(body)).toMatchObject({
              message: 'forbidden',
              extensions: { code: 'forbidden' },
            });
            expect(body.data?.[field] ?? null).toBeNull();
          });
        }
      }
      for (const [name, spec] of Object.entries(ADMIN_GQL)) {
        for (const scope of NARROW_SCOPES) {
          caseOf(`scope ${scope} ${transport} ${name}`)(`${scope}: ${name} is 403`, async () => {
            const body = await run(w.scoped[scope], spec.call());
            expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'forbidden' } });
          });
        }
      }
    });
  }
});
