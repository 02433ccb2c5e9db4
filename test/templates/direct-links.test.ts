import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { signatureAt, uploadPdf } from '../helpers/factories';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { DESKTOP, hasChromium, useBrowser } from '../helpers/browser';

/**
 * A template's public signing link (issue 34, docs/direct-links.md): whoever opens it gives their name and contact
 * (checked as initialize-from-template checks them) and signs a session made for them; on or off, with an expiry
 * and a use limit that hold under racing visitors; rate-limited per address; refused when the stamps it reserves
 * are not there; every use in the audit trail and told to the owner by webhook.
 */
describe('direct links', () => {
  let app: TestApp;
  let owner: TestUser;
  let templateId: string;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    // Visitors' addresses come in X-Forwarded-For, as behind a load balancer.
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', TRUST_PROXY: 'loopback' } });
    owner = await app.createUser();
    const fileId = await uploadPdf(app, owner.token);
    const saved = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Rental agreement',
        file_id: fileId,
        signers: [
          { reason: 'Tenant', sign_type: 'suresign', elements: [signatureAt(0)] },
          { reason: 'Landlord', sign_type: 'suresign', elements: [signatureAt(0, 300)] },
        ],
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    templateId = saved.body.data.client_id;
    await rest(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['esign.direct_link.used'] },
    });
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  const landlord = { full_name: 'Lalit Landlord', email: 'landlord@example.com' };
  const setLink = (json: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/templates/direct-link', {
      token,
      json: { template_id: templateId, sign_type: 'suresign', signers: [landlord], ...json },
    });
  const visit = async (url: string, body: Record<string, unknown>, ip?: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const tenant = (index: number) => ({ full_name: `Tenant ${index}`, email: `tenant${index}@example.com` });

  it('is made for a template, off or on; a visitor becomes the first signer of a session of their own', async () => {
    const made = await setLink({ enabled: true });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data).toMatchObject({
      client_id: expect.stringMatching(/^dlink_/),
      template_id: templateId,
      url: expect.stringMatching(new RegExp(`^${app.url}/d/[\\w-]{20,}$`)),
      enabled: true,
      uses: 0,
      visitor_position: 0,
    });
    const read = await rest<any>(app, 'GET', '/templates/direct-link', {
      token: owner.token,
      query: { template_id: templateId },
    });
    expect(read.body.data).toEqual(made.body.data);

    // The page is a form; the visitor's answer starts their session and sends them to sign it.
    const page = await fetch(made.body.data.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('Rental agreement');
    const form = await fetch(made.body.data.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(tenant(1)).toString(),
      redirect: 'manual',
    });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toMatch(new RegExp(`^${app.url}/sign/`));

    const used = await visit(made.body.data.url, tenant(2));
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    const session = (
      await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: used.body.data.client_id } })
    ).body.data;
    expect(session).toMatchObject({ template_id: templateId, status: 'pending' });
    expect(session.signers.map((signer: any) => signer.full_name)).toEqual(['Tenant 2', 'Lalit Landlord']);
    expect(used.body.data.invite_url).toBe(session.signers[0].invite_url);

    // The use is in the session's audit trail, with the visitor's address, and told to the owner.
    const audit = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    expect(audit.body.data.events.find((event: any) => event.event === 'direct_link_used')).toMatchObject({
      signer_id: session.signers[0].signer_id,
      ip: expect.any(String),
      details: { direct_link_id: made.body.data.client_id, template_id: templateId },
    });
    await receiver.waitFor(
      (received) => received.some((event) => event.json.data?.client_id === session.client_id),
      'the esign.direct_link.used event',
    );
    const event = receiver.of('esign.direct_link.used').find((received) => received.json.data.client_id === session.client_id)!;
    expect(event.json).toMatchObject({ direct_link_id: made.body.data.client_id, signer_id: session.signers[0].signer_id });
    expect(
      (await rest<any>(app, 'GET', '/templates/direct-link', { token: owner.token, query: { template_id: templateId } })).body
        .data.uses,
    ).toBe(2);
  });

  it('checks the visitor as initialize-from-template checks a signer, naming the field; the form says so', async () => {
    const link = (await setLink({ enabled: true })).body.data;
    const bad = await visit(link.url, { full_name: 'No Contact' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('signers[0].email');
    const badEmail = await visit(link.url, { full_name: 'Typo', email: 'not-an-email' });
    expect(badEmail.body.errors[0].field).toMatch(/^signers\[0\]\.email/);
    const page = await fetch(link.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'full_name=No+Contact',
    });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('email or mobile is required');
  });

  it('off, expired or used up: 404 alike; the use limit holds under racing visitors', async () => {
    const link = (await setLink({ enabled: true, max_uses: 3 })).body.data;
    const uses = link.uses;
    // Whatever it was used for before, exactly 3 more go through.
    const raised = (await setLink({ enabled: true, max_uses: uses + 3 })).body.data;
    const racing = await Promise.all(
      Array.from({ length: 8 }, (_, index) => visit(raised.url, tenant(100 + index), `10.0.0.${index + 1}`)),
    );
    expect(racing.filter((answer) => answer.status === 200)).toHaveLength(3);
    expect(racing.filter((answer) => answer.status === 404).map((answer) => answer.body.message)).toEqual(
      Array(5).fill('This link is not available.'),
    );
    expect((await fetch(raised.url)).status).toBe(404);

    await setLink({ enabled: false });
    expect((await visit(raised.url, tenant(200))).status).toBe(404);
    const expiring = (await setLink({ enabled: true, expires_at: new Date(Date.now() + 60_000).toISOString() })).body.data;
    expect((await fetch(expiring.url)).status).toBe(200);
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update direct_links set expires_at = now() - interval '1 second' where id = ?`, [expiring.client_id]);
    expect((await visit(expiring.url, tenant(201))).status).toBe(404);
    expect((await fetch(`${app.url}/d/nonexistent-slug`)).status).toBe(404);
    // Malformed bodies are refused as such, never a 500.
    const open = (await setLink({ enabled: true, max_uses: null, expires_at: null })).body.data;
    for (const [type, body] of [
      ['application/json', '{"full_name": '],
      ['application/x-www-form-urlencoded', 'full_name=%E0%A4%A'],
      ['text/plain', 'full_name=x'],
    ]) {
      const answer = await fetch(open.url, { method: 'POST', headers: { 'content-type': type! }, body });
      expect(answer.status, `${type}: ${await answer.text()}`).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
  });

  it('one address starts at most 5 sessions an hour through a link', async () => {
    const link = (await setLink({ enabled: true, max_uses: null })).body.data;
    const answers = [];
    for (let index = 0; index < 6; index++) answers.push(await visit(link.url, tenant(300 + index), '10.9.9.9'));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
    // Another address is not held back.
    expect((await visit(link.url, tenant(310), '10.9.9.10')).status).toBe(200);
  });

  it('a link that reserves stamps is refused (422) when the owner has none, and holds nothing', async () => {
    const link = (
      await setLink({
        enabled: true,
        stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', first_party_name: 'Tenant', second_party_name: 'Landlord' },
      })
    ).body.data;
    expect(link, 'the link is made: stamps are looked for when it is used').toBeTruthy();
    const before = link.uses;
    const answer = await visit(link.url, tenant(400), '10.8.8.8');
    expect(answer.status).toBe(422);
    expect(answer.body.message).toBe('stamp_combination_not_found');
    expect(
      (await rest<any>(app, 'GET', '/templates/direct-link', { token: owner.token, query: { template_id: templateId } })).body
        .data.uses,
    ).toBe(before);
  });

  it('refuses options that could never make a session, naming the link’s own fields', async () => {
    const bare = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'No reasons saved',
        file_id: (await rest<any>(app, 'GET', '/templates/details', { token: owner.token, query: { client_id: templateId } }))
          .body.data.file_id,
        signers: [{ elements: [signatureAt(0)] }, { elements: [signatureAt(0, 300)] }],
      },
    });
    const refused = await rest<any>(app, 'POST', '/templates/direct-link', {
      token: owner.token,
      json: { template_id: bare.body.data.client_id, enabled: true, sign_type: 'suresign', signers: [landlord] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors!.map((error: any) => error.field).sort()).toEqual(['signers[0].reason', 'visitor_reason']);
  });

  it('belongs to the template’s owner: another user’s token gets 404', async () => {
    const other = await app.createUser();
    expect((await setLink({ enabled: true }, other.token)).status).toBe(404);
    expect(
      (await rest<any>(app, 'GET', '/templates/direct-link', { token: other.token, query: { template_id: templateId } })).status,
    ).toBe(404);
  });

  describe.skipIf(!hasChromium)('in a browser', () => {
    const browser = useBrowser();
    it('a visitor opens the link, gives their name and email, and signs the session made for them', async () => {
      const link = (await setLink({ enabled: true, max_uses: null, stamp: null })).body.data;
      const context = await browser().newContext({ ...DESKTOP, reducedMotion: 'reduce' });
      try {
        const page = await context.newPage();
        await page.goto(link.url);
        await page.getByLabel('Full name').fill('Browser Tenant');
        await page.getByLabel('Email').fill('browser.tenant@example.com');
        await page.getByRole('button', { name: 'Continue to the document' }).click();
        await page.waitForURL(/\/sign\//);
        await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
        await page.getByRole('button', { name: 'Sign the document' }).click();
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
        const sessions = await rest<any>(app, 'GET', '/esign/list', { token: owner.token, query: { size: 100 } });
        const mine = sessions.body.data.items.find((item: any) => item.signers?.[0]?.full_name === 'Browser Tenant');
        const details = await rest<any>(app, 'GET', '/esign/details', {
          token: owner.token,
          query: { client_id: mine.client_id },
        });
        expect(details.body.data.signers[0].status).toBe('completed');
        // The landlord, invited in turn, signs too: the session the link started completes.
        const signed = await signerApi(app, 'POST', '/sign', details.body.data.signers[1].token, { consent: true });
        expect(signed.status, JSON.stringify(signed.body)).toBe(200);
        const after = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: mine.client_id } });
        expect(after.body.data.status).toBe('completed');
      } finally {
        await context.close();
      }
    });
  });
});
