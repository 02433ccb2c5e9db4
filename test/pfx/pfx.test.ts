import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPfxCredential } from '../../src/modules/pfx/manage-pfx';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import type { Envelope } from '../helpers/clients';
import { makePkcs12 } from '../helpers/pfx';

const PFX_KEYS = ['created_at', 'issuer', 'name', 'not_after', 'not_before', 'pfx_id', 'serial_number', 'subject'];

describe('PFX signing certificates', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
  });
  afterAll(async () => app.close());

  async function upload(token: string, parts: { file?: Buffer; password?: string; filename?: string }) {
    const form = new FormData();
    if (parts.file) form.append('file', new Blob([new Uint8Array(parts.file)]), parts.filename ?? 'seal.pfx');
    if (parts.password !== undefined) form.append('password', parts.password);
    const response = await fetch(new URL('/api/v1/pfx/upload', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    return { status: response.status, body: (await response.json()) as Envelope<any> };
  }

  async function graphql(token: string, query: string) {
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: any; errors?: any[] };
  }

  it('accepts a PKCS#12 with its password and tells what it holds, never the key', async () => {
    const file = makePkcs12({ password: 'correct horse', commonName: 'Acme Legal Seal' });
    const response = await upload(owner.token, { file, password: 'correct horse', filename: 'acme-seal.p12' });
    expect(response.status).toBe(200);
    const pfx = response.body.data;
    expect(Object.keys(pfx).sort()).toEqual(PFX_KEYS);
    expect(pfx.pfx_id).toMatch(/^pfx_[0-9a-f]{32}$/);
    expect(pfx).toMatchObject({ name: 'acme-seal.p12' });
    expect(pfx.subject).toContain('CN=Acme Legal Seal');
    expect(new Date(pfx.not_after).getTime()).toBeGreaterThan(Date.now());

    // At rest: sealed, no PEM, no password; the signing step can open it.
    const [row] = await app.services.orm.em
      .fork()
      .getConnection()
      .execute('select * from pfx_credentials where id = ?', [pfx.pfx_id]);
    expect(JSON.stringify(row)).not.toMatch(/BEGIN|correct horse/);
    const opened = await openPfxCredential(app.services.orm.em.fork(), app.services.config.secretsEncryptionKey, pfx.pfx_id);
    expect(opened.privateKeyPem).toContain('BEGIN RSA PRIVATE KEY');
    expect(opened.certificatePem).toContain('BEGIN CERTIFICATE');
    expect(JSON.stringify(app.logs)).not.toContain('correct horse');
  });

  it.each([
    ['a wrong password', { file: makePkcs12({ password: 'right' }), password: 'wrong' }, 'pfx_wrong_password', 'password'],
    [
      'a file without a private key',
      { file: makePkcs12({ includeKey: false }), password: 'secret' },
      'pfx_no_private_key',
      'file',
    ],
    [
      'an expired certificate',
      { file: makePkcs12({ notBefore: new Date('2020-01-01'), notAfter: new Date('2021-01-01') }), password: 'secret' },
      'pfx_certificate_expired',
      'file',
    ],
    [
      'a certificate not valid yet',
      {
        file: makePkcs12({
          notBefore: new Date(Date.now() + 86_400_000 * 30),
          notAfter: new Date(Date.now() + 86_400_000 * 400),
        }),
        password: 'secret',
      },
      'pfx_certificate_expired',
      'file',
    ],
    [
      'bytes that are not PKCS#12',
      { file: Buffer.from('%PDF-1.7 not a certificate'), password: 'secret' },
      'pfx_invalid',
      'file',
    ],
    ['an empty file', { file: Buffer.alloc(0), password: 'secret' }, 'file_empty', 'file'],
    ['no file part', { password: 'secret' }, 'file_empty', 'file'],
    ['no password part', { file: makePkcs12() }, 'missing_fields', 'password'],
    ['a file over 256 KB', { file: Buffer.alloc(256 * 1024 + 1, 1), password: 'secret' }, 'file_too_large', 'file'],
  ])('refuses %s with %s', async (_name, parts, code, field) => {
    const before = (await graphql(owner.token, '{ pfxCertificates { pfx_id } }')).data.pfxCertificates.length;
    const response = await upload(owner.token, parts);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ data: null, status_code: 400, message: code, success: false });
    expect(response.body.errors?.map((e) => e.field)).toContain(field);
    expect((await graphql(owner.token, '{ pfxCertificates { pfx_id } }')).data.pfxCertificates).toHaveLength(before);
  });

  it('lists and deletes over GraphQL, for the owner only', async () => {
    const uploaded = (await upload(owner.token, { file: makePkcs12(), password: 'secret' })).body.data.pfx_id;
    const listed = await graphql(owner.token, '{ pfxCertificates { pfx_id subject not_after } }');
    expect(listed.data.pfxCertificates.map((p: any) => p.pfx_id)).toContain(uploaded);
    expect((await graphql(other.token, '{ pfxCertificates { pfx_id } }')).data.pfxCertificates).toEqual([]);

    const foreign = await graphql(other.token, `mutation { deletePfx(pfx_id: "${uploaded}") { pfx_id } }`);
    expect(foreign.errors?.[0].extensions.code).toBe('not_found');
    const deleted = await graphql(owner.token, `mutation { deletePfx(pfx_id: "${uploaded}") { pfx_id deleted_at } }`);
    expect(deleted.data.deletePfx.pfx_id).toBe(uploaded);
    expect(
      (await graphql(owner.token, '{ pfxCertificates { pfx_id } }')).data.pfxCertificates.map((p: any) => p.pfx_id),
    ).not.toContain(uploaded);
    const again = await graphql(owner.token, `mutation { deletePfx(pfx_id: "${uploaded}") { pfx_id } }`);
    expect(again.errors?.[0].extensions.code).toBe('not_found');
    // The key material is gone, not just hidden.
    const [row] = await app.services.orm.em
      .fork()
      .getConnection()
      .execute('select sealed from pfx_credentials where id = ?', [uploaded]);
    expect(row.sealed).toBe('');
  });

  it('uploads over GraphQL multipart too, with the same refusals', async () => {
    const send = async (file: Buffer, password: string) => {
      const form = new FormData();
      form.append(
        'operations',
        JSON.stringify({
          query:
            'mutation ($file: Upload!, $password: String!) { uploadPfx(file: $file, password: $password) { pfx_id subject } }',
          variables: { file: null, password },
        }),
      );
      form.append('map', JSON.stringify({ 0: ['variables.file'] }));
      form.append('0', new Blob([new Uint8Array(file)]), 'seal.pfx');
      const response = await fetch(new URL('/graphql', app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' },
        body: form,
      });
      return (await response.json()) as { data?: any; errors?: any[] };
    };
    const ok = await send(makePkcs12({ password: 'pw' }), 'pw');
    expect(ok.data.uploadPfx.pfx_id).toMatch(/^pfx_/);
    const wrong = await send(makePkcs12({ password: 'pw' }), 'nope');
    expect(wrong.errors?.[0].extensions).toMatchObject({ code: 'pfx_wrong_password' });
  });
});
