/**
 * The bridge's HTTP face on 127.0.0.1: the JSON API for the service's signing page (/v1/*, configured origins
 * only) and the approval page (/approve/*, the bridge's own origin only), which is the only place a PIN is typed.
 */
import http from 'node:http';
import { APPROVAL_CSP, formatName, outcomeText, renderApprovalPage, renderOutcomePage, wrongPinNotice } from './approval-page.ts';
import { SignRequests, TooManyRequests, type SignRequest } from './requests.ts';
import type { TokenCertificate, Tokens } from './tokens.ts';

export interface ServerOptions {
  origins: readonly string[];
  tokens: Tokens;
  requests: SignRequests;
  version: string;
}

const BODY_LIMIT = 16 * 1024;
/** A body this far over the limit is not read any further: the 413 goes out at once and the connection closes. */
const DRAIN_LIMIT = 1024 * 1024;
const MAX_WAIT_SECONDS = 25;
const REQUEST_ID = /^[0-9a-f]{32}$/;
/** Field names (lower-cased) that can only mean a PIN sent where it must never be. */
const PIN_FIELDS = new Set(['pin', 'user_pin', 'userpin', 'pin_code', 'pincode', 'password', 'passphrase']);

type Res = http.ServerResponse;
type Req = http.IncomingMessage;

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function createBridgeServer(options: ServerOptions): http.Server {
  return http.createServer((req, res) => {
    handle(options, req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return sendError(res, error);
      // Never the request body in the log: it may hold a PIN.
      console.error(`esign-dsc-bridge: internal error on ${req.method} ${pathOf(req)}:`, error);
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'internal_error', message: 'internal error' } });
      else res.destroy();
    });
  });
}

async function handle(options: ServerOptions, req: Req, res: Res): Promise<void> {
  const port = req.socket.localPort ?? 0;
  // DNS rebinding: a page at evil.example resolved to 127.0.0.1 still sends "Host: evil.example:<port>".
  const host = (req.headers.host ?? '').toLowerCase();
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
    throw new HttpError(421, 'misdirected_request', 'This bridge answers only to 127.0.0.1 and localhost.');
  }
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  if (url.pathname.startsWith('/v1/')) return handleApi(options, req, res, url);
  if (url.pathname.startsWith('/approve/')) return handleApproval(options, req, res, url, port);
  throw new HttpError(404, 'not_found', 'No such path.');
}

async function handleApi(options: ServerOptions, req: Req, res: Res, url: URL): Promise<void> {
  res.setHeader('Vary', 'Origin');
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !options.origins.includes(origin)) {
    throw new HttpError(403, 'origin_refused', 'This origin may not use the bridge.');
  }
  res.setHeader('Access-Control-Allow-Origin', origin);
  if (req.method === 'OPTIONS') return preflight(req, res);
  const path = url.pathname;
  if (path === '/v1/status') {
    allowMethod(req, 'GET');
    const tokens = options.tokens.listTokens();
    const modules = options.tokens.moduleStatus();
    return sendJson(res, 200, { bridge: 'esign-dsc-bridge', version: options.version, modules, tokens });
  }
  if (path === '/v1/certificates') {
    allowMethod(req, 'GET');
    return sendJson(res, 200, { certificates: options.tokens.listCertificates().map(certificateJson) });
  }
  if (path === '/v1/sign') {
    allowMethod(req, 'POST');
    return createSignRequest(options, req, res, origin);
  }
  const match = /^\/v1\/sign\/([^/]+)$/.exec(path);
  if (match) {
    allowMethod(req, 'GET');
    return readSignRequest(options, res, match[1]!, origin, url);
  }
  throw new HttpError(404, 'not_found', 'No such path.');
}

function preflight(req: Req, res: Res): void {
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
  res.setHeader('Access-Control-Allow-Headers', 'content-type');
  res.setHeader('Access-Control-Max-Age', '600');
  // Chromium's Private Network Access: a public page may reach 127.0.0.1 only if the bridge says yes.
  if (req.headers['access-control-request-private-network'] === 'true') {
    res.setHeader('Access-Control-Allow-Private-Network', 'true');
  }
  res.writeHead(204).end();
}

async function createSignRequest(options: ServerOptions, req: Req, res: Res, origin: string): Promise<void> {
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw new HttpError(400, 'invalid_request', 'The body must be JSON (content-type: application/json).');
  }
  const raw = await readBody(req);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, 'invalid_request', 'The body is not valid JSON.');
  }
  const input = parseSignInput(body);
  const certificate = options.tokens.findCertificate(input.certificateId);
  if (!certificate) throw new HttpError(404, 'certificate_not_found', 'No present token holds this certificate.');
  let request: SignRequest;
  try {
    request = options.requests.create({ origin, certificate, digest: input.digest, description: input.description });
  } catch (error) {
    if (error instanceof TooManyRequests) throw new HttpError(429, 'too_many_requests', error.message);
    throw error;
  }
  const port = req.socket.localPort;
  const approveUrl = `http://127.0.0.1:${port}/approve/${request.id}?key=${request.key}`;
  console.error(`esign-dsc-bridge: sign request ${request.id} from ${origin} waits for approval`);
  sendJson(res, 202, { request_id: request.id, approve_url: approveUrl, expires_at: new Date(request.expiresAt).toISOString() });
}

function parseSignInput(body: unknown): { certificateId: string; digest: Buffer; description: string } {
  const invalid = (message: string) => new HttpError(400, 'invalid_request', message);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  // The PIN is typed on the bridge's own page only. A page that sends one here is wrong (or hostile): refuse it
  // rather than ignore it, so that its authors learn at once, and never keep or log it.
  if (Object.keys(fields).some((name) => PIN_FIELDS.has(name.toLowerCase()))) {
    throw invalid('The PIN is entered in the bridge, never sent.');
  }
  const { certificate_id: certificateId, digest, digest_algorithm: algorithm, description } = fields;
  if (typeof certificateId !== 'string' || certificateId === '') throw invalid('certificate_id is required.');
  if (algorithm !== 'sha-256') throw invalid('digest_algorithm must be "sha-256".');
  if (typeof digest !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(digest)) throw invalid('digest must be base64.');
  const bytes = Buffer.from(digest, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== digest) throw invalid('digest must be base64 of exactly 32 bytes.');
  if (typeof description !== 'string') throw invalid('description is required.');
  const length = [...description].length;
  if (description.trim() === '' || length > 300) throw invalid('description must have 1 to 300 characters.');
  // Newlines may structure the text; other control characters could only hide part of it from the signer.
  if (/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(description)) {
    throw invalid('description must not contain control characters.');
  }
  return { certificateId, digest: bytes, description };
}

async function readSignRequest(options: ServerOptions, res: Res, id: string, origin: string, url: URL): Promise<void> {
  // Only the origin that made a request may follow it.
  const request = REQUEST_ID.test(id) ? options.requests.get(id) : undefined;
  if (!request || request.origin !== origin) throw new HttpError(404, 'request_not_found', 'No such sign request.');
  const waitText = url.searchParams.get('wait');
  if (waitText !== null) {
    if (!/^\d{1,2}$/.test(waitText) || Number(waitText) > MAX_WAIT_SECONDS) {
      throw new HttpError(400, 'invalid_request', `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}.`);
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    await options.requests.waitForChange(request, Number(waitText) * 1000, gone.signal);
    if (gone.signal.aborted) return; // the page went away while waiting
  }
  const answer: Record<string, unknown> = { status: request.status };
  if (request.signature) answer.signature = request.signature.toString('base64');
  if (request.error) answer.error = request.error;
  sendJson(res, 200, answer);
}

async function handleApproval(options: ServerOptions, req: Req, res: Res, url: URL, port: number): Promise<void> {
  const id = url.pathname.slice('/approve/'.length);
  if (req.method === 'GET') {
    const request = REQUEST_ID.test(id) ? options.requests.getWithKey(id, url.searchParams.get('key') ?? '') : undefined;
    if (!request) return sendInvalidLink(res);
    if (request.status !== 'waiting') return sendOutcome(res, request);
    return sendHtml(res, 200, renderApprovalPage({ request, pin: safePinState(options.tokens, request.certificate) }));
  }
  allowMethod(req, 'POST');
  // Only a form on the bridge's own page may approve: a form posted from the service's page carries its origin.
  const origin = req.headers.origin;
  if (origin !== `http://127.0.0.1:${port}` && origin !== `http://localhost:${port}`) {
    return sendHtml(res, 403, renderOutcomePage('Refused', 'Approve the signature on the bridge page itself.'));
  }
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    return sendHtml(res, 400, renderOutcomePage('Bad request', 'The form could not be read.'));
  }
  const raw = await readBody(req);
  const form = parseForm(raw);
  raw.fill(0);
  const pin = form.get('pin') ?? Buffer.alloc(0);
  try {
    const request = REQUEST_ID.test(id) ? options.requests.getWithKey(id, form.get('key')?.toString('utf8') ?? '') : undefined;
    if (!request) return sendInvalidLink(res);
    if (request.status !== 'waiting') return sendOutcome(res, request);
    const action = form.get('action')?.toString('utf8');
    if (action === 'cancel') {
      options.requests.finish(request, { error: { code: 'cancelled', message: 'The signer cancelled.' } });
      console.error(`esign-dsc-bridge: sign request ${request.id} cancelled by the signer`);
      return sendOutcome(res, request);
    }
    if (action !== 'sign') return sendHtml(res, 400, renderOutcomePage('Bad request', 'The form could not be read.'));
    approve(options, res, request, pin);
  } finally {
    for (const value of form.values()) value.fill(0);
  }
}

function approve(options: ServerOptions, res: Res, request: SignRequest, pin: Buffer): void {
  if (pin.length === 0) {
    const page = renderApprovalPage({
      request,
      pin: safePinState(options.tokens, request.certificate),
      notice: "Enter the token's PIN.",
    });
    return sendHtml(res, 200, page);
  }
  const outcome = options.tokens.sign(request.certificate, pin, request.digest);
  if (outcome.kind === 'wrong_pin') {
    console.error(`esign-dsc-bridge: sign request ${request.id}: wrong PIN`);
    // The notice says what the token's flags say: no second warning under it.
    return sendHtml(res, 200, renderApprovalPage({ request, pin: null, notice: wrongPinNotice(outcome.pin) }));
  }
  if (outcome.kind === 'signed') {
    options.requests.finish(request, { signature: outcome.signature });
  } else {
    options.requests.finish(request, { error: { code: outcome.code, message: outcome.message } });
  }
  console.error(
    `esign-dsc-bridge: sign request ${request.id}: ${request.status}${request.error ? ` (${request.error.code})` : ''}`,
  );
  sendOutcome(res, request);
}

function safePinState(tokens: Tokens, certificate: TokenCertificate) {
  try {
    return tokens.pinState(certificate);
  } catch {
    return null; // the warning is a courtesy: the page works without it
  }
}

function certificateJson(c: TokenCertificate) {
  return {
    id: c.id,
    token_label: c.tokenLabel,
    token_serial: c.tokenSerial,
    label: c.label,
    subject: formatName(c.x509.subject),
    issuer: formatName(c.x509.issuer),
    serial_number: c.x509.serialNumber.toLowerCase(),
    not_before: c.x509.validFromDate.toISOString(),
    not_after: c.x509.validToDate.toISOString(),
    key_type: c.keyType,
    certificate: c.der.toString('base64'),
  };
}

function allowMethod(req: Req, method: string): void {
  if (req.method !== method) throw new HttpError(405, 'method_not_allowed', `Use ${method}.`);
}

/**
 * Reads at most BODY_LIMIT bytes. A longer body is read to its end (up to DRAIN_LIMIT) so the client gets the 413;
 * past DRAIN_LIMIT reading stops (destroying the request here would reset the connection before the 413 is sent).
 */
function readBody(req: Req): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const tooLarge = () => new HttpError(413, 'payload_too_large', `The body must not exceed ${BODY_LIMIT} bytes.`);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) chunks.push(chunk);
      else chunk.fill(0);
      if (size > DRAIN_LIMIT) {
        // Stop reading: the 413 goes out with "Connection: close", and the connection closes after it.
        req.removeAllListeners('data');
        req.pause();
        for (const kept of chunks) kept.fill(0);
        reject(tooLarge());
      }
    });
    req.on('end', () => {
      if (size > BODY_LIMIT) {
        for (const chunk of chunks) chunk.fill(0);
        return reject(tooLarge());
      }
      const body = Buffer.concat(chunks, size);
      for (const chunk of chunks) chunk.fill(0); // the form body may hold a PIN
      resolve(body);
    });
    req.on('error', reject);
  });
}

/**
 * application/x-www-form-urlencoded into Buffers rather than strings, so that the PIN can be wiped afterwards.
 * The first value of a repeated field wins.
 */
export function parseForm(raw: Buffer): Map<string, Buffer> {
  const fields = new Map<string, Buffer>();
  let start = 0;
  while (start < raw.length) {
    let end = raw.indexOf(0x26, start); // '&'
    if (end === -1) end = raw.length;
    const part = raw.subarray(start, end);
    const eq = part.indexOf(0x3d); // '='
    const name = percentDecode(eq === -1 ? part : part.subarray(0, eq)).toString('utf8');
    const value = percentDecode(eq === -1 ? Buffer.alloc(0) : part.subarray(eq + 1));
    if (name !== '' && !fields.has(name)) fields.set(name, value);
    else value.fill(0);
    start = end + 1;
  }
  return fields;
}

function percentDecode(bytes: Buffer): Buffer {
  const out = Buffer.alloc(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const high = i + 2 < bytes.length ? hexValue(bytes[i + 1]!) : -1;
    const low = high >= 0 ? hexValue(bytes[i + 2]!) : -1;
    if (byte === 0x25 && low >= 0) {
      out[n++] = high * 16 + low;
      i += 2;
    } else {
      out[n++] = byte === 0x2b ? 0x20 : byte; // '+' is a space
    }
  }
  return out.subarray(0, n);
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

function sendOutcome(res: Res, request: SignRequest): void {
  const { title, message } = outcomeText(request);
  sendHtml(res, 200, renderOutcomePage(title, message));
}

function sendInvalidLink(res: Res): void {
  sendHtml(res, 404, renderOutcomePage('Link not valid', 'This approval link is not valid. Start again from the signing page.'));
}

function sendError(res: Res, error: HttpError): void {
  if (res.headersSent) return void res.destroy();
  if (error.status === 413) res.setHeader('Connection', 'close');
  sendJson(res, error.status, { error: { code: error.code, message: error.message } });
}

function sendJson(res: Res, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

function sendHtml(res: Res, status: number, html: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Content-Security-Policy': APPROVAL_CSP,
    'X-Frame-Options': 'DENY',
    // Not no-referrer: with it, browsers send "Origin: null" on the form's POST (Fetch, "append a request Origin
    // header"), which the approval's origin check must refuse. same-origin sends nothing to any other origin.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(html);
}

function pathOf(req: Req): string {
  // The approval link's key is a secret: log the path without the query.
  return (req.url ?? '/').split('?')[0]!;
}
