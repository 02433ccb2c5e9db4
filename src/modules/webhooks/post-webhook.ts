import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { assertPublicTarget, targetLookup, type TargetPolicy } from '../../platform/net/public-targets';

/** What the delivery log keeps of an answer. */
export const EXCERPT_BYTES = 1024;

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one `v1=` per secret that is valid now (two during
 * a rotation), as Stripe signs: a receiver checks that one of them matches with a secret it holds, and that `t` is
 * recent (replays of an old delivery are refused).
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  const signed = `${timestamp}.${body}`;
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`)].join(
    ',',
  );
}

export interface PostOutcome {
  /** Any 2xx. */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** At most EXCERPT_BYTES of the answer, as text. */
  excerpt: string | null;
  /** Why there was no answer (timeout, refused, a target that is not public), or why it is not a success. */
  error: string | null;
}

const lookups = { public: targetLookup('public'), 'public-or-loopback': targetLookup('public-or-loopback') };

/**
 * One POST, with a deadline on the whole exchange, redirects not followed (a 3xx is a failure), and the target's
 * address checked where the connection is made, always: the name is resolved for the connection and refused if it
 * resolves to an address the policy refuses (loopback too unless WEBHOOK_ALLOW_PRIVATE; private, link-local and
 * metadata addresses always), so a name that changed its address since the endpoint was saved is caught (DNS
 * rebinding).
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; targets: TargetPolicy },
): Promise<PostOutcome> {
  const began = performance.now();
  const elapsed = () => Math.round(performance.now() - began);
  const target = new URL(url);
  try {
    if (isIP(target.hostname.replace(/^\[|\]$/g, ''))) await assertPublicTarget(target, options.targets);
  } catch (error) {
    return { ok: false, statusCode: null, durationMs: elapsed(), excerpt: null, error: (error as Error).message };
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<PostOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        lookup: lookups[options.targets],
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const statusCode = response.statusCode ?? null;
          const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
          const excerpt = kept > 0 ? printable(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES)) : null;
          finish({ ok, statusCode, excerpt, error: ok ? null : `answered ${statusCode}` });
        };
        response.on('data', (chunk: Buffer) => {
          if (kept < EXCERPT_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
          }
          // The log keeps 1 KB: the rest of a long answer is not waited for.
          if (kept >= EXCERPT_BYTES) done();
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const deadline = setTimeout(
      () => finish({ ok: false, statusCode: null, excerpt: null, error: `no answer within ${options.timeoutMs} ms` }),
      options.timeoutMs,
    );
    request.on('error', (error) => finish({ ok: false, statusCode: null, excerpt: null, error: error.message.slice(0, 300) }));
    request.end(body);
  });
}

/** Text a log can hold: UTF-8 with control characters (NUL included, which PostgreSQL text refuses) replaced. */
function printable(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd');
}
