import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const hasXmlsec1 = spawnSync('xmlsec1', ['--version']).status === 0;

/** Debian's xmlsec1 (an XML-DSig implementation independent of xml-crypto) checking `xml` with `certificatePem`. */
export function xmlsec1Verify(xml: string, certificatePem: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'xmlsec1-'));
  try {
    writeFileSync(path.join(dir, 'signed.xml'), xml);
    writeFileSync(path.join(dir, 'signer.pem'), certificatePem);
    // URI="" needs no --id-attr; only same-document empty references are let through.
    const run = spawnSync(
      'xmlsec1',
      ['--verify', '--pubkey-cert-pem', 'signer.pem', '--enabled-reference-uris', 'empty', 'signed.xml'],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
