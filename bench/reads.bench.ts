import { createDecipheriv, createHash, hkdfSync } from 'node:crypto';
import type http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import express from 'express';
import pg from 'pg';
import { freePort } from '../src/platform/db/embedded-postgres';
import { startBenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { createSession, graphqlCall, makePdf, makePng, restCall, sessionRequest, uploadAsset, uploadPdf } from './session-setup';

const CONNECTIONS = sized(20, 10);
const WARMUP_SECONDS = sized(3, 1);
const ROUNDS = sized(5, 1);
const ROUND_SECONDS = sized(3, 1);

/** Every field GET /api/v1/esign/details answers with, asked for over GraphQL. */
const DETAILS_QUERY = `query Details($id: String!) {
  esignSession(client_id: $id) {
    client_id user_id actor_id actor_type created_at sign_type auth_mode backend file_id current_pdf_file_id filename folder
    allow_download allow_delegation append_certificate signing_order reminder_interval_hours reminder_max
    archived expiry_seconds expires_at max_retry redirect_url sender
    email_template_overrides { company_name legal_name support_email }
    signer_idx status cancel_reason template_id template_version
    signers {
      signer_id eligible invite_url token sign_type auth_mode max_retry pfx_id full_name email country_code mobile verify_email
      verify_mobile reason accept_virtual_sign status decline_reason declined_at
      elements {
        field_id x y page type alignment width height allow_wet_signature font_size format value
        required read_only label min_length max_length pattern min max options multiline every_page filled_at
      }
      aadhaar_cert_details { name country state pin_code aadhaar year_of_birth gender }
      verify_location location_source language enforce_geofence latitude longitude radius
      name_match { enforce prefill_name signer_name score status }
      face_match { enforce ref_file_id live_file_id match_threshold max_attempts liveness_score match_score }
      notification { invite completion whatsapp }
      positions
      email_verified_at mobile_verified_at
      location { source latitude longitude accuracy_m ip distance_m recorded_at }
    }
    stamps { stamp_id }
  }
}`;

type Row = Record<string, any>;

/**
 * The same read with nothing in between: express 5 and a pg pool of the app's size, the app's three statements
 * (token look-up by hash, the session of its owner, its signers), each signer token opened with AES-256-GCM
 * under the app's HKDF-derived key, and the contract's JSON (envelope included) built by hand.
 */
async function startBareHandler(
  databaseUrl: string,
  secretsEncryptionKey: string,
  publicUrl: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const key = Buffer.from(hkdfSync('sha256', secretsEncryptionKey, 'esign-estamp', 'signer-token', 32));
  const openToken = (sealed: string) => {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  };
  const fail = (res: express.Response, status: number, message: string) =>
    res.status(status).json({ data: null, status_code: status, message, success: false });
  const bearer = /^Bearer[ ]+([A-Za-z0-9_\-.~+/]+=*)[ ]*$/i;

  const app = express();
  app.disable('x-powered-by');
  app.get('/api/v1/esign/details', async (req, res, next) => {
    try {
      const token = bearer.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !token.startsWith('esk_') || token.length > 200) return fail(res, 401, 'unauthorized');
      const actor = await pool.query<{ id: string; user_id: string }>(
        'select id, user_id from access_tokens where token_hash = $1 and revoked_at is null and (expires_at is null or expires_at > now())',
        [createHash('sha256').update(token, 'utf8').digest('hex')],
      );
      if (actor.rows.length === 0) return fail(res, 401, 'unauthorized');
      const clientId = req.query.client_id;
      if (typeof clientId !== 'string' || !clientId) return fail(res, 400, 'missing client_id');
      const sessions = await pool.query<Row>('select * from esign_sessions where id = $1 and user_id = $2 limit 1', [
        clientId,
        actor.rows[0].user_id,
      ]);
      const s = sessions.rows[0];
      if (!s) return fail(res, 404, 'Esign client with the given client_id not found');
      // The app expires a due session on read; the bench's session is never due.
      if (s.status === 'pending' && (s.expires_at as Date).getTime() <= Date.now()) return fail(res, 500, 'due session');
      const signers = await pool.query<Row>('select * from esign_signers where session_id = $1 order by position asc', [s.id]);
      // The stamps the session holds, as the service's loader reads them (the bench's session holds none).
      const stamps = await pool.query<Row>(
        'select id from stamp_instances where session_id = $1 order by duty_paise desc, created_at asc, serial asc, id asc',
        [s.id],
      );
      if (stamps.rows.length > 0) return fail(res, 500, 'the bare handler draws no stamps');
      const overrides = s.email_template_overrides;
      res.json({
        data: {
          client_id: s.id,
          user_id: s.user_id,
          actor_id: s.user_id,
          actor_type: 'user',
          created_at: s.created_at,
          sign_type: s.sign_type,
          auth_mode: [s.auth_mode],
          backend: s.backend,
          file_id: s.file_id,
          current_pdf_file_id: s.current_pdf_file_id,
          filename: s.filename,
          folder: s.folder,
          allow_download: s.allow_download,
          allow_delegation: s.allow_delegation,
          append_certificate: s.append_certificate,
          signing_order: s.signing_order,
          reminder_interval_hours: s.reminder_interval_hours,
          reminder_max: s.reminder_max,
          archived: s.archived,
          expiry_seconds: s.expiry_seconds,
          expires_at: s.expires_at,
          max_retry: s.max_retry,
          redirect_url: s.redirect_url,
          sender: s.sender,
          email_template_overrides: overrides
            ? {
                company_name: overrides.company_name ?? null,
                legal_name: overrides.legal_name ?? null,
                support_email: overrides.support_email ?? null,
              }
            : null,
          signer_idx: s.signer_idx,
          status: s.status,
          cancel_reason: s.cancel_reason,
          template_id: s.template_id,
          template_version: s.template_version,
          signers: signers.rows.map((r) => signerJson(r, s, openToken(r.token_sealed), publicUrl)),
          stamps: [],
        },
        status_code: 200,
        message: 'Success',
        success: true,
      });
    } catch (error) {
      next(error);
    }
  });
  const port = await freePort();
  const server = await new Promise<http.Server>((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

function signerJson(r: Row, s: Row, token: string, publicUrl: string): Row {
  const positions: Record<string, { x: number; y: number }[]> = {};
  for (const element of r.elements as Row[]) {
    if (element.type === 'signature')
      (positions[String(element.page + s.stamp_page_count)] ??= []).push({ x: element.x, y: element.y });
  }
  const nameMatch = r.name_match;
  const faceMatch = r.face_match;
  const aadhaar = r.aadhaar_cert_details;
  return {
    signer_id: r.id,
    eligible: s.status === 'pending' && r.status === 'pending' && r.position === s.signer_idx,
    invite_url: `${publicUrl}/sign/${token}`,
    token,
    sign_type: r.sign_type,
    auth_mode: [r.auth_mode],
    max_retry: r.max_retry,
    pfx_id: r.pfx_id,
    full_name: r.full_name,
    email: r.email,
    country_code: r.country_code,
    mobile: r.mobile,
    verify_email: r.verify_email,
    verify_mobile: r.verify_mobile,
    reason: r.reason,
    accept_virtual_sign: r.accept_virtual_sign,
    status: r.status,
    decline_reason: r.decline_reason ?? null,
    declined_at: r.declined_at ? new Date(r.declined_at).toISOString() : null,
    elements: (r.elements as Row[]).map((e) => ({
      field_id: e.field_id ?? null,
      x: e.x,
      y: e.y,
      page: e.page,
      type: e.type,
      alignment: e.alignment,
      width: e.width,
      height: e.height,
      allow_wet_signature: e.allow_wet_signature,
      font_size: e.font_size,
      format: e.format ?? null,
      value: e.value ?? null,
      required: e.required ?? null,
      read_only: e.read_only ?? null,
      label: e.label ?? null,
      min_length: e.min_length ?? null,
      max_length: e.max_length ?? null,
      pattern: e.pattern ?? null,
      min: e.min ?? null,
      max: e.max ?? null,
      options: e.options ?? null,
      multiline: e.multiline ?? null,
      every_page: e.every_page ?? null,
      filled_at: e.filled_at ?? null,
    })),
    aadhaar_cert_details: aadhaar
      ? {
          name: aadhaar.name,
          country: aadhaar.country,
          state: aadhaar.state,
          pin_code: aadhaar.pin_code,
          aadhaar: aadhaar.aadhaar,
          year_of_birth: aadhaar.year_of_birth,
          gender: aadhaar.gender,
        }
      : null,
    verify_location: r.verify_location,
    location_source: r.location_source,
    language: r.language ?? null,
    enforce_geofence: r.enforce_geofence,
    latitude: r.latitude,
    longitude: r.longitude,
    radius: r.radius,
    name_match: {
      enforce: nameMatch.enforce,
      prefill_name: nameMatch.prefill_name ?? null,
      signer_name: nameMatch.signer_name ?? null,
      score: nameMatch.score ?? null,
      status: nameMatch.status,
    },
    face_match: {
      enforce: faceMatch.enforce,
      ref_file_id: faceMatch.ref_file_id ?? null,
      live_file_id: faceMatch.live_file_id ?? null,
      match_threshold: faceMatch.match_threshold ?? null,
      max_attempts: faceMatch.max_attempts ?? null,
      liveness_score: faceMatch.liveness_score ?? null,
      match_score: faceMatch.match_score ?? null,
    },
    notification: { invite: r.notification.invite, completion: r.notification.completion, whatsapp: r.notification.whatsapp },
    positions,
    email_verified_at: r.email_verified_at ? new Date(r.email_verified_at).toISOString() : null,
    mobile_verified_at: r.mobile_verified_at ? new Date(r.mobile_verified_at).toISOString() : null,
    location: r.location ?? null,
  };
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

type Face = { name: string; options: autocannon.Options };

/** One autocannon run; any error or non-2xx answer fails the benchmark. */
async function run(face: Face, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({ ...face.options, connections: CONNECTIONS, duration: seconds, timeout: 10 });
  if (result.errors > 0 || result.non2xx > 0 || result['2xx'] === 0) {
    throw new Error(
      `${face.name}: ${result.errors} errors (${result.timeouts} timeouts), ${result.non2xx} non-2xx of ${result.requests.total} requests`,
    );
  }
  return result;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Every face warmed up, then measured in interleaved rounds (bare, REST, GraphQL, bare, ...), so that a slow
 * spell of a shared machine falls on all of them alike rather than on whichever ran then. Requests/s sums every
 * round; p50 and p99 are the medians of the rounds' own.
 */
async function loadInRounds(faces: Face[]): Promise<Load[]> {
  for (const face of faces) await run(face, WARMUP_SECONDS);
  const rounds: autocannon.Result[][] = faces.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, face] of faces.entries()) {
      (globalThis as { gc?: () => void }).gc?.();
      rounds[i].push(await run(face, ROUND_SECONDS));
    }
  }
  return rounds.map((results) => {
    const requests = results.reduce((sum, result) => sum + result['2xx'], 0);
    const seconds = results.reduce((sum, result) => sum + result.duration, 0);
    return {
      rps: requests / seconds,
      p50: median(results.map((result) => result.latency.p50)),
      p99: median(results.map((result) => result.latency.p99)),
      requests,
    };
  });
}

const describe = (load: Load) => `${load.rps.toFixed(0)} req/s, p50 ${load.p50.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms`;

/**
 * Benchmark 1, reads: one session (3 signers with 2 elements each) read by GET /api/v1/esign/details, by the same
 * read over GraphQL (every field the REST answer has), and by a bare express + pg handler running the same SQL
 * and answering the same JSON, each under the same load (autocannon in this process, 20 connections, a 3 s
 * warm-up each, then 5 interleaved rounds of 3 s). Before loading, the three answers are checked to be the same.
 * Floor: each face serves at least half the requests per second of the bare handler.
 */
export async function readBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const app = await startBenchApp(database);
  let bare: Awaited<ReturnType<typeof startBareHandler>> | undefined;
  try {
    const user = await app.createUser();
    const pdf = await uploadPdf(app, user.token, await makePdf(2));
    const asset = await uploadAsset(app, user.token, makePng(40, 20));
    const session = await createSession(app, user.token, sessionRequest(pdf, 3, asset));
    bare = await startBareHandler(app.databaseUrl, app.config.secretsEncryptionKey, app.config.publicUrl);

    const path = `/api/v1/esign/details?client_id=${encodeURIComponent(session.client_id)}`;
    const headers = { authorization: `Bearer ${user.token}` };
    const graphqlBody = JSON.stringify({ query: DETAILS_QUERY, variables: { id: session.client_id } });

    // The same answer three ways (the tokens are opened and every field is there), or the comparison is void.
    const rest = await restCall<Row>(app, 'GET', path.replace('/api/v1', ''), user.token);
    const bareAnswer = await (await fetch(`${bare.url}${path}`, { headers, signal: AbortSignal.timeout(10_000) })).json();
    const graphql = await graphqlCall<{ esignSession: Row }>(app, user.token, DETAILS_QUERY, { id: session.client_id });
    if (rest.status !== 200 || (rest.body.data?.signers as Row[] | undefined)?.length !== 3) {
      throw new Error(`REST details answered ${rest.status}: ${JSON.stringify(rest.body)}`);
    }
    if (!isDeepStrictEqual(bareAnswer, rest.body)) {
      throw new Error(
        `the bare handler's answer differs from REST:\n${JSON.stringify(bareAnswer)}\n${JSON.stringify(rest.body)}`,
      );
    }
    if (!isDeepStrictEqual(graphql.esignSession, rest.body.data)) {
      throw new Error(
        `the GraphQL answer differs from REST:\n${JSON.stringify(graphql.esignSession)}\n${JSON.stringify(rest.body.data)}`,
      );
    }

    const [baseline, restLoad, graphqlLoad] = await loadInRounds([
      { name: 'bare handler', options: { url: `${bare.url}${path}`, headers } },
      { name: 'REST details', options: { url: `${app.url}${path}`, headers } },
      {
        name: 'GraphQL esignSession',
        options: {
          url: `${app.url}/graphql`,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: graphqlBody,
        },
      },
    ]);

    const row = (name: string, load: Load): BenchRow => {
      const ratio = load.rps / baseline.rps;
      return {
        name,
        figure: describe(load),
        baseline: `${describe(baseline)} (bare express + pg)`,
        ratio,
        floor: 'req/s ratio >= 0.50',
        ok: ratio >= 0.5,
      };
    };
    return [
      row(`reads: GET /api/v1/esign/details, ${CONNECTIONS} connections`, restLoad),
      row(`reads: GraphQL esignSession, same fields, ${CONNECTIONS} connections`, graphqlLoad),
    ];
  } finally {
    await bare?.close();
    await app.close();
  }
}
