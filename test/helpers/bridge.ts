import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './process';

/** The DSC bridge's entry point, run by Node's type stripping as a signer would run it. */
export const BRIDGE_MAIN = path.join(ROOT, 'bridge/src/main.ts');

export interface BridgeProcess {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  stderr: string[];
  stop(): Promise<void>;
}

const LISTENING = /^esign-dsc-bridge listening on (http:\/\/127\.0\.0\.1:(\d+))$/;

/**
 * Starts `node bridge/src/main.ts --module <m> --origin <o>... --port 0` with the token's env; resolves once it prints
 * its listening line. `port` (default 0, any free port) for a page that expects the bridge at a fixed one.
 */
export async function startBridge(options: {
  modules: string[];
  origins: string[];
  env?: Record<string, string>;
  port?: number;
}): Promise<BridgeProcess> {
  const args = [
    BRIDGE_MAIN,
    ...options.modules.flatMap((m) => ['--module', m]),
    ...options.origins.flatMap((o) => ['--origin', o]),
  ];
  const child = spawn(process.execPath, [...args, '--port', String(options.port ?? 0)], {
    cwd: ROOT,
    // Only what the bridge needs: no ESIGN_BRIDGE_* from the test runner's environment.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = (into: string[], onLine?: (line: string) => void) => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        into.push(line);
        onLine?.(line);
      }
    };
  };
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));

  const listening = new Promise<{ url: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the bridge did not print its listening line within 20 s; stderr: ${stderr.join('\n')}`));
    }, 20_000);
    child.stdout!.on(
      'data',
      lines(stdout, (line) => {
        const match = LISTENING.exec(line);
        if (!match) return;
        clearTimeout(timer);
        resolve({ url: match[1]!, port: Number(match[2]) });
      }),
    );
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the bridge exited (${code}) before listening; stderr: ${stderr.join('\n')}`));
    });
  });
  child.stderr!.on('data', lines(stderr));

  const { url, port } = await listening;
  return {
    url,
    port,
    stderr,
    async stop() {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * What the signer does on the bridge's approval page: GET approveUrl, read the form (hidden key), POST it with
 * the PIN and action=sign (or 'cancel'), with Origin = the bridge's own origin, as the browser would. Answers the
 * HTML of the page shown after and its status. Throws when the page shows no form (a wrong key, or a request that
 * is over: signed, refused or expired).
 */
export async function approveInBridge(
  approveUrl: string,
  pin: string,
  action: 'sign' | 'cancel' = 'sign',
): Promise<{ status: number; html: string }> {
  const page = await fetch(approveUrl);
  const pageHtml = await page.text();
  const form = /<form method="post" action="([^"]+)">/.exec(pageHtml);
  const key = /<input type="hidden" name="key" value="([^"]*)">/.exec(pageHtml);
  if (page.status !== 200 || !form || !key) {
    throw new Error(`the approval page shows no form (HTTP ${page.status}): ${pageHtml}`);
  }
  const target = new URL(unescapeHtml(form[1]!), approveUrl);
  const body = new URLSearchParams({ key: unescapeHtml(key[1]!), pin, action });
  const response = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: target.origin },
    body: body.toString(),
  });
  return { status: response.status, html: await response.text() };
}

/** Long-polls GET /v1/sign/:id?wait=25 with the given Origin until the status is not 'waiting'; returns the JSON. */
export async function waitForBridgeSignature(
  bridge: BridgeProcess,
  origin: string,
  requestId: string,
): Promise<{ status: string; signature?: string; error?: { code: string; message: string } }> {
  for (;;) {
    const response = await fetch(`${bridge.url}/v1/sign/${requestId}?wait=25`, { headers: { origin } });
    const body = (await response.json()) as { status: string; signature?: string; error?: { code: string; message: string } };
    if (response.status !== 200) throw new Error(`GET /v1/sign/${requestId}: HTTP ${response.status} ${JSON.stringify(body)}`);
    if (body.status !== 'waiting') return body;
  }
}

function unescapeHtml(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
}
