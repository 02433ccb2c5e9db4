import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parse, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as generated from '../../client/src/__generated__/graphql';
import {
  CancelEsignDocument,
  CreateBrowserTokenDocument,
  CreateStampOrderDocument,
  createEsignClient,
  EsignApiError,
  EsignSessionDocument,
  InitializeEsignDocument,
  MeDocument,
  StampOrdersDocument,
  UploadPdfDocument,
  type EsignClient,
} from '../../client/src/index';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { FOUR_PAGE_PDF } from '../helpers/factories';

/**
 * The typed client (issue 34, client/README.md) against the running service: typed operations for every root field,
 * uploads, refusals as EsignApiError, and subscriptions that start with the current state, reconnect after a broken
 * connection and end when the order or session is final, followed with a browser token.
 */
describe('the typed client', () => {
  let app: TestApp;
  let owner: TestUser;
  let client: EsignClient;
  const clients: EsignClient[] = [];
  const make = (options: Parameters<typeof createEsignClient>[0]) => {
    const made = createEsignClient(options);
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    client = make({ url: app.url, token: owner.token });
  });
  afterAll(async () => {
    await Promise.all(clients.map((each) => each.close()));
    await app?.close();
  });

  it('has a typed operation for every query, mutation and subscription of the schema', () => {
    const schema = app.http.schema;
    const documents = new Set(Object.keys(generated).filter((name) => name.endsWith('Document')));
    for (const type of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      for (const field of Object.keys(type!.getFields())) {
        expect(documents, field).toContain(`${field[0]!.toUpperCase()}${field.slice(1)}Document`);
      }
    }
  });

  it('its browser operations select no credential field of the service', () => {
    const schema = app.http.schema;
    const source = readFileSync(path.resolve(__dirname, '../../client/operations/operations.graphql'), 'utf8');
    const document = parse(source);
    const typeInfo = new TypeInfo(schema);
    const selected: string[] = [];
    let operation = '';
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        OperationDefinition: (node) => {
          operation = node.name?.value ?? '';
        },
        Field: () => {
          const field = typeInfo.getFieldDef();
          if (operation.endsWith('ForBrowser') && field?.extensions.credential) selected.push(`${operation}: ${field.name}`);
        },
      }),
    );
    expect(selected).toEqual([]);
    expect(source).toContain('query esignSessionForBrowser');
  });

  it('sends typed queries and mutations, uploads included, and throws the service’s refusals', async () => {
    const me = await client.request(MeDocument);
    expect(me.me.user_id).toBe(owner.user_id);
    const uploaded = await client.request(UploadPdfDocument, {
      file: new File([new Uint8Array(FOUR_PAGE_PDF)], 'contract.pdf', { type: 'application/pdf' }),
    });
    expect(uploaded.uploadPdf.client_id).toMatch(/^file_/);
    const started = await client.request(InitializeEsignDocument, {
      file_id: uploaded.uploadPdf.client_id,
      sign_type: 'suresign',
      signers: [
        {
          full_name: 'Asha Rao',
          email: 'asha@example.com',
          reason: 'Tenant',
          elements: [{ x: 72, y: 600, page: 0, type: 'signature', alignment: 'left' }],
        },
      ],
    });
    expect(started.initializeEsign.signers[0]!.invite_url).toMatch(/\/sign\//);
    const read = await client.request(EsignSessionDocument, { client_id: started.initializeEsign.client_id });
    expect(read.esignSession.status).toBe('pending');
    const refused = await client
      .request(EsignSessionDocument, { client_id: 'esign_0123456789abcdef0123456789abcdef' })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(EsignApiError);
    expect(refused).toMatchObject({ code: 'not_found', message: 'Esign client with the given client_id not found' });
  });

  it('follows an order with a browser token: the current state first, then to the end; nothing else is readable', async () => {
    const order = await client.request(CreateStampOrderDocument, {
      state_code: 'MH',
      article_id: 'MH-5',
      first_party_name: 'A',
      second_party_name: 'B',
      stamp_duty_amount: 100,
      consideration_amount: 1000,
      quantity: 3,
      mock: true,
    });
    const minted = await client.request(CreateBrowserTokenDocument, { resource_id: order.createStampOrder.client_id });
    const browser = make({ url: app.url, token: minted.createBrowserToken.token });
    const seen: string[] = [];
    const final = await browser.followOrder(order.createStampOrder.client_id, (update) => seen.push(update.status));
    expect(final.status).toBe('completed');
    expect(final.status_counts.available).toBe(3);
    expect(seen.at(-1)).toBe('completed');
    const elsewhere = await browser.request(StampOrdersDocument, { page: 1, size: 10 }).catch((error) => error);
    expect(elsewhere).toMatchObject({ code: 'forbidden' });
  });

  it('reconnects after the connection breaks and ends when the session is final', async () => {
    const uploaded = await client.request(UploadPdfDocument, {
      file: new File([new Uint8Array(FOUR_PAGE_PDF)], 'lease.pdf', { type: 'application/pdf' }),
    });
    const session = (
      await client.request(InitializeEsignDocument, {
        file_id: uploaded.uploadPdf.client_id,
        sign_type: 'suresign',
        signers: [
          {
            full_name: 'Ravi K',
            email: 'ravi@example.com',
            reason: 'Tenant',
            elements: [{ x: 72, y: 600, page: 0, type: 'signature', alignment: 'left' }],
          },
        ],
      })
    ).initializeEsign;
    const minted = await client.request(CreateBrowserTokenDocument, { resource_id: session.client_id });

    // Between the client and the service, a proxy whose connections the test can cut.
    const sockets = new Set<net.Socket>();
    let connections = 0;
    const proxy = net.createServer((incoming) => {
      connections += 1;
      const outgoing = net.connect(Number(new URL(app.url).port), '127.0.0.1');
      for (const socket of [incoming, outgoing]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      incoming.pipe(outgoing).pipe(incoming);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    try {
      const browser = make({
        url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
        token: minted.createBrowserToken.token,
        retryWait: () => 50,
      });
      const updates: string[] = [];
      const following = browser.followSession(session.client_id, (update) => updates.push(update.status));
      await until(() => updates.length > 0);
      expect(updates[0]).toBe('pending');
      for (const socket of sockets) socket.destroy();
      // Back again: the subscription starts over with the current state.
      await until(() => connections >= 2 && updates.length > 1);
      await client.request(CancelEsignDocument, { client_id: session.client_id });
      const final = await following;
      expect(final.status).toBe('cancelled');
      expect(final.signers[0]).not.toHaveProperty('token');
    } finally {
      proxy.close();
      for (const socket of sockets) socket.destroy();
    }
  });
});

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
