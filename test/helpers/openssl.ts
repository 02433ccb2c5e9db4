import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

/**
 * Runs openssl in a scratch directory holding `files`: its exit status and everything it printed. Asynchronous:
 * openssl may call the app under test (an OCSP responder, a TSA), which answers from this very process.
 */
export async function openssl(
  args: string[],
  files: Record<string, string | Buffer>,
): Promise<{ status: number | null; output: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'openssl-'));
  try {
    for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
    return await new Promise((resolve, reject) => {
      const child = spawn('openssl', args, { cwd: dir });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, output }));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
