import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * SoftHSM2 tokens for tests: a software PKCS#11 token that stands in for a DSC USB token. Each token lives in a
 * temporary directory of its own, with its own softhsm2.conf, so tests never see each other's tokens nor the
 * system's /var/lib/softhsm. Debian: apt-get install softhsm2 opensc (pkcs11-tool) openssl.
 */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

function onPath(command: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

/** softhsm2-util and pkcs11-tool on PATH, and the SoftHSM2 PKCS#11 library at SOFTHSM_MODULE. */
export const hasSoftHsm: boolean =
  onPath('softhsm2-util') && onPath('pkcs11-tool') && onPath('openssl') && existsSync(SOFTHSM_MODULE);

export interface SoftTokenObject {
  /** CKA_ID in hex, e.g. '01': the certificate and its private key share it. */
  id: string;
  label: string;
  /** PKCS#8 or PKCS#1 PEM, RSA. */
  privateKeyPem: string;
  certificatePem: string;
}

export interface SoftToken {
  /** Path of the SOFTHSM2_CONF file of this token's own temporary token directory. */
  conf: string;
  /** Environment to give a process (the bridge) so it sees this token: { SOFTHSM2_CONF: conf }. */
  env: Record<string, string>;
  label: string;
  pin: string;
  soPin: string;
  /** Removes the token (softhsm2-util --delete-token), as if the USB token were pulled out. */
  remove(): Promise<void>;
  /** Adds one more certificate + key object. */
  add(object: SoftTokenObject): Promise<void>;
  /** Deletes the temporary directory. */
  cleanup(): Promise<void>;
}

/**
 * Runs a command with SOFTHSM2_CONF set; rejects with its output when it fails. Asynchronous: the app under test
 * may be running in this very process.
 */
function run(command: string, args: string[], conf: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status === 0) resolve(output);
      // The arguments hold test PINs only; they help say which step failed.
      else reject(new Error(`${command} ${args.join(' ')} exited with ${status}: ${output.trim()}`));
    });
  });
}

/** A new initialised SoftHSM2 token holding `objects` (each a private key and its certificate under one CKA_ID). */
export async function createSoftToken(options: {
  label?: string;
  pin?: string;
  soPin?: string;
  objects: SoftTokenObject[];
}): Promise<SoftToken> {
  if (!hasSoftHsm) throw new Error('SoftHSM2 is not installed (softhsm2-util, pkcs11-tool, openssl, libsofthsm2.so)');
  const label = options.label ?? 'DSC';
  const pin = options.pin ?? '1234';
  const soPin = options.soPin ?? '5678';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'softhsm-'));
  const conf = path.join(dir, 'softhsm2.conf');
  const work = path.join(dir, 'work');
  let objectCount = 0;
  try {
    await mkdir(path.join(dir, 'tokens'));
    await mkdir(work);
    await writeFile(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
    // --free takes the first free slot and gives the token a new, random slot id: find it by label, not index.
    await run('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', soPin], conf, work);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  const add = async (object: SoftTokenObject): Promise<void> => {
    if (!/^(?:[0-9a-f]{2})+$/i.test(object.id)) throw new Error(`CKA_ID "${object.id}" must be hex bytes, e.g. "01"`);
    const n = objectCount++;
    const keyPem = path.join(work, `key-${n}.pem`);
    const keyPk8 = path.join(work, `key-${n}.pk8`);
    const certDer = path.join(work, `cert-${n}.der`);
    try {
      await writeFile(keyPem, object.privateKeyPem, { mode: 0o600 });
      await run('openssl', ['pkcs8', '-topk8', '-nocrypt', '-in', keyPem, '-out', keyPk8], conf, work);
      await run(
        'softhsm2-util',
        ['--import', keyPk8, '--token', label, '--label', object.label, '--id', object.id, '--pin', pin],
        conf,
        work,
      );
      await writeFile(certDer, new X509Certificate(object.certificatePem).raw);
      await run(
        'pkcs11-tool',
        [
          '--module',
          SOFTHSM_MODULE,
          '--token-label',
          label,
          '--login',
          '--pin',
          pin,
          '--write-object',
          certDer,
          '--type',
          'cert',
          '--id',
          object.id,
          '--label',
          object.label,
        ],
        conf,
        work,
      );
    } finally {
      await Promise.all([keyPem, keyPk8, certDer].map((file) => rm(file, { force: true })));
    }
  };

  const token: SoftToken = {
    conf,
    env: { SOFTHSM2_CONF: conf },
    label,
    pin,
    soPin,
    add,
    async remove() {
      await run('softhsm2-util', ['--delete-token', '--token', label], conf, work);
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const object of options.objects) await add(object);
  } catch (error) {
    await token.cleanup();
    throw error;
  }
  return token;
}
