/**
 * The LTV step asks the servers that certificates name for revocation data. An uploaded document chooses those
 * certificates: here one carries 30 of them, all naming a server that takes every request and never answers. What
 * is asked is bounded (24 certificates, 4 at once, per-request timeout, a budget in all), the service's own chains
 * go first, and it is asked before the last signature's transaction, never while the session's row is locked.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { externalIdentity, signExternally } from '../helpers/external-signer';
import { corpusFile } from '../helpers/fixtures';
import { hasOpenssl } from '../helpers/openssl';

const HOSTILE_CERTIFICATES = 30;

/** A root and `count` certificates it issued (one EC key), each naming its own OCSP and CRL URL on `server`. */
function hostileChain(server: string, count: number): { keyPem: string; certificatesPem: string[]; rootPem: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hostile-chain-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    run(
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
      '-subj', '/CN=Hostile Root', '-keyout', 'root.key', '-out', 'root.pem',
    ); // prettier-ignore
    run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'leaf.key');
    run('req', '-new', '-key', 'leaf.key', '-subj', '/CN=Hostile Signer', '-out', 'leaf.csr');
    const certificatesPem: string[] = [];
    for (let n = 0; n < count; n++) {
      writeFileSync(
        path.join(dir, 'ext.cnf'),
        `authorityInfoAccess = OCSP;URI:${server}/ocsp/${n}\ncrlDistributionPoints = URI:${server}/crl/${n}\n`,
      );
      run(
        'x509', '-req', '-in', 'leaf.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-set_serial', String(1000 + n),
        '-days', '2', '-extfile', 'ext.cnf', '-out', `cert-${n}.pem`,
      ); // prettier-ignore
      certificatesPem.push(readFileSync(path.join(dir, `cert-${n}.pem`), 'utf8'));
    }
    return {
      keyPem: readFileSync(path.join(dir, 'leaf.key'), 'utf8'),
      certificatesPem,
      rootPem: readFileSync(path.join(dir, 'root.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!hasOpenssl)('the LTV step, given a document whose certificates name a server that never answers', () => {
  let app: TestApp;
  let owner: TestUser;
  let tarpit: http.Server;
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  let sessionId: string | undefined;
  const probes: Promise<boolean>[] = [];
  const rowIsLocked = async (id: string): Promise<boolean> => {
    const client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select 1 from esign_sessions where id = $1 for key share nowait', [id]);
      return false;
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') return true;
      throw error;
    } finally {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  };

  beforeAll(async () => {
    tarpit = http.createServer((request) => {
      asked.push(`${request.method} ${request.url}`);
      // Whether the session's row is locked while the service waits on this server (a signing step's transaction
      // holds it FOR UPDATE; FOR KEY SHARE probes do not block one another).
      if (sessionId) probes.push(rowIsLocked(sessionId));
    });
    tarpit.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', resolve));
    app = await startTestApp({
      env: { PADES_LTV: 'true', LTV_REVOCATION_TIMEOUT_MS: '400', LTV_REVOCATION_BUDGET_MS: '2000' },
    });
    owner = await app.createUser();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => tarpit.close(resolve));
    await app?.close();
  });

  it('completes the session; asks for at most 24 certificates, 4 at a time, within its budget; ours first and good', async () => {
    const { port } = tarpit.address() as { port: number };
    const chain = hostileChain(`http://127.0.0.1:${port}`, HOSTILE_CERTIFICATES);
    const [signing, ...others] = chain.certificatesPem;
    const hostile = externalIdentity('Hostile Signer', {
      keyPem: chain.keyPem,
      certificatePem: signing,
      extraCertificatesPem: [...others, chain.rootPem].join(''),
    });
    const uploaded = await signExternally(corpusFile('001-trivial/minimal-document.pdf'), hostile, { contentsBytes: 65_536 });
    hostile.dispose();

    const fileId = await uploadPdf(app, owner.token, uploaded, 'carries 30 certificates.pdf');
    const session = await createSession(app, owner.token, sessionBody(fileId, { signers: [signerInput()] }));
    sessionId = session.client_id;
    const signed = await signerApi(app, 'POST', '/sign', session.signers[0].token, { consent: true });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.status).toBe('completed');

    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    const revocation: { subject: string; status: string; problems: string[] }[] = trail.body.data.events.find(
      (event: any) => event.event === 'session_completed',
    ).details.revocation;
    const ours = revocation.filter((entry) => !entry.subject.includes('Hostile'));
    const theirs = revocation.filter((entry) => entry.subject.includes('Hostile'));
    expect(theirs).toHaveLength(HOSTILE_CERTIFICATES);
    // The service's own chains (its signing certificate, its TSA) were asked first, and answered.
    expect(revocation.slice(0, ours.length)).toEqual(ours);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.every((entry) => entry.status === 'good')).toBe(true);

    // 24 certificates at most: the others were not asked at all.
    const notAsked = theirs.filter((entry) => entry.problems.some((problem) => problem.includes('at most 24 certificates')));
    expect(notAsked.length).toBeGreaterThanOrEqual(HOSTILE_CERTIFICATES - 24);
    // Each of the 22 asked costs two timeouts (OCSP, then the CRL), 4 at once: more than the 2 s budget, which ended the
    // lookups still waiting.
    expect(theirs.some((entry) => entry.problems.includes('not asked: the time for revocation lookups was spent'))).toBe(true);
    expect(theirs.every((entry) => entry.status === 'unavailable')).toBe(true);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThan((HOSTILE_CERTIFICATES - notAsked.length) * 2);
    expect(asked.every((request) => /^(POST \/ocsp|GET \/crl)\/\d+$/.test(request))).toBe(true);
    // Looked up once, before the signing step's transaction, and reused in it: no URL asked twice, and the session's
    // row was never locked while the service waited on the server.
    expect(new Set(asked).size).toBe(asked.length);
    expect(await Promise.all(probes)).toEqual(asked.map(() => false));
  });
});
