import { setTimeout as sleep } from 'node:timers/promises';
import { inflateSync } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFRawStream, StandardFonts, type PDFObject } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { StampReferenceArticlesDocument, StampReferenceStatesDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest } from '../helpers/clients';

/**
 * The reference data of all 36 states and union territories (docs/stamp-reference-data.md): what the two faces
 * list, that every state has the common kinds of instrument, and that a state added by the migration can be
 * ordered from end to end, its certificate naming it.
 */

interface StateJson {
  state_code: string;
  name: string;
}

interface ArticleJson {
  article_id: string;
  name: string;
  description: string;
}

/** Every state: its name, how many articles are seeded, and one of them (id and name). */
const STATES: Record<string, { name: string; articles: number; sample: [string, string] }> = {
  AN: { name: 'Andaman and Nicobar Islands', articles: 10, sample: ['AN-23', 'Article 23 - Conveyance'] },
  AP: { name: 'Andhra Pradesh', articles: 10, sample: ['AP-35', 'Article 35 - Lease'] },
  AR: { name: 'Arunachal Pradesh', articles: 10, sample: ['AR-4', 'Article 4 - Affidavit'] },
  AS: { name: 'Assam', articles: 10, sample: ['AS-5', 'Article 5 - Agreement or memorandum of an agreement'] },
  BR: { name: 'Bihar', articles: 10, sample: ['BR-15', 'Article 15 - Bond'] },
  CG: { name: 'Chhattisgarh', articles: 10, sample: ['CG-48', 'Article 48 - Power of attorney'] },
  CH: { name: 'Chandigarh', articles: 10, sample: ['CH-33', 'Article 33 - Gift'] },
  DH: { name: 'Dadra and Nagar Haveli and Daman and Diu', articles: 10, sample: ['DH-40', 'Article 40 - Mortgage deed'] },
  DL: { name: 'Delhi', articles: 11, sample: ['DL-45', 'Article 45 - Partition'] },
  GA: { name: 'Goa', articles: 10, sample: ['GA-46', 'Article 46 - Partnership'] },
  GJ: { name: 'Gujarat', articles: 10, sample: ['GJ-28', 'Article 28 - Gift'] },
  HP: { name: 'Himachal Pradesh', articles: 10, sample: ['HP-34', 'Article 34 - Indemnity bond'] },
  HR: { name: 'Haryana', articles: 10, sample: ['HR-23', 'Article 23 - Conveyance'] },
  JH: { name: 'Jharkhand', articles: 10, sample: ['JH-35', 'Article 35 - Lease'] },
  JK: { name: 'Jammu and Kashmir', articles: 10, sample: ['JK-48', 'Article 48 - Power of attorney'] },
  KA: { name: 'Karnataka', articles: 10, sample: ['KA-29', 'Article 29 - Indemnity bond'] },
  KL: { name: 'Kerala', articles: 10, sample: ['KL-44', 'Article 44 - Power of attorney'] },
  LA: { name: 'Ladakh', articles: 10, sample: ['LA-5', 'Article 5 - Agreement or memorandum of an agreement'] },
  LD: { name: 'Lakshadweep', articles: 10, sample: ['LD-4', 'Article 4 - Affidavit'] },
  MH: { name: 'Maharashtra', articles: 11, sample: ['MH-36A', 'Article 36A - Leave and licence'] },
  ML: { name: 'Meghalaya', articles: 10, sample: ['ML-33', 'Article 33 - Gift'] },
  MN: { name: 'Manipur', articles: 10, sample: ['MN-15', 'Article 15 - Bond'] },
  MP: { name: 'Madhya Pradesh', articles: 10, sample: ['MP-40', 'Article 40 - Mortgage deed'] },
  MZ: { name: 'Mizoram', articles: 10, sample: ['MZ-46', 'Article 46 - Partnership'] },
  NL: { name: 'Nagaland', articles: 10, sample: ['NL-34', 'Article 34 - Indemnity bond'] },
  OD: { name: 'Odisha', articles: 10, sample: ['OD-23', 'Article 23 - Conveyance'] },
  PB: { name: 'Punjab', articles: 10, sample: ['PB-35', 'Article 35 - Lease'] },
  PY: { name: 'Puducherry', articles: 10, sample: ['PY-48', 'Article 48 - Power of attorney'] },
  RJ: { name: 'Rajasthan', articles: 10, sample: ['RJ-21', 'Article 21 - Conveyance'] },
  SK: { name: 'Sikkim', articles: 10, sample: ['SK-5', 'Article 5 - Agreement or memorandum of an agreement'] },
  TG: { name: 'Telangana', articles: 10, sample: ['TG-35', 'Article 35 - Lease'] },
  TN: { name: 'Tamil Nadu', articles: 10, sample: ['TN-46', 'Article 46 - Partnership'] },
  TR: { name: 'Tripura', articles: 10, sample: ['TR-40', 'Article 40 - Mortgage deed'] },
  UK: { name: 'Uttarakhand', articles: 10, sample: ['UK-33', 'Article 33 - Gift'] },
  UP: { name: 'Uttar Pradesh', articles: 10, sample: ['UP-15', 'Article 15 - Bond'] },
  WB: { name: 'West Bengal', articles: 10, sample: ['WB-40', 'Article 40 - Mortgage deed'] },
};
const CODES = Object.keys(STATES).sort();
const ARTICLE_COUNT = Object.values(STATES).reduce((sum, state) => sum + state.articles, 0);

/** The kinds of instrument every state must offer, recognised by the article's name (leave and licence may be the lease). */
const KINDS: [kind: string, matches: (article: ArticleJson) => boolean][] = [
  ['affidavit', (a) => /- Affidavit$/.test(a.name)],
  ['agreement', (a) => /- Agreement\b/.test(a.name)],
  ['bond', (a) => /- Bond$/.test(a.name)],
  ['conveyance', (a) => /- Conveyance$/.test(a.name)],
  ['gift', (a) => /- Gift$/.test(a.name)],
  ['indemnity bond', (a) => /- Indemnity bond$/.test(a.name)],
  ['lease', (a) => /- Lease$/.test(a.name)],
  [
    'leave and licence',
    (a) => /- Leave and licence$/.test(a.name) || (/- Lease$/.test(a.name) && /leave and licence/i.test(a.description)),
  ],
  ['mortgage', (a) => /- Mortgage deed$/.test(a.name)],
  ['partnership', (a) => /- Partnership$/.test(a.name)],
  ['power of attorney', (a) => /- Power of attorney$/.test(a.name)],
];

/**
 * The rows of the first reference-data migration: ids and names unchanged, except MH-34, seeded as
 * 'Article 34 - Indemnity bond' in error and corrected to Gift (ORIGINAL_MH_34 has what it was).
 */
const EARLIER_ARTICLES: Record<string, string> = {
  ...Object.fromEntries(
    ['DL', 'UP', 'WB', 'TN'].flatMap((code) => [
      [`${code}-4`, 'Article 4 - Affidavit'],
      [`${code}-5`, 'Article 5 - Agreement or memorandum of an agreement'],
      [`${code}-23`, 'Article 23 - Conveyance'],
      [`${code}-34`, 'Article 34 - Indemnity bond'],
      [`${code}-35`, 'Article 35 - Lease'],
      [`${code}-48`, 'Article 48 - Power of attorney'],
    ]),
  ),
  'DL-45': 'Article 45 - Partition',
  'MH-4': 'Article 4 - Affidavit',
  'MH-5': 'Article 5 - Agreement or its records or memorandum of an agreement',
  'MH-25': 'Article 25 - Conveyance',
  'MH-34': 'Article 34 - Gift',
  'MH-36': 'Article 36 - Lease',
  'MH-48': 'Article 48 - Power of attorney',
  'KA-4': 'Article 4 - Affidavit',
  'KA-5': 'Article 5 - Agreement or memorandum of an agreement',
  'KA-20': 'Article 20 - Conveyance',
  'KA-30': 'Article 30 - Lease',
  'KA-41': 'Article 41 - Power of attorney',
};

/** MH-34 as the first migration seeded it, and as the second migration's down() restores it. */
const ORIGINAL_MH_34 = {
  name: 'Article 34 - Indemnity bond',
  description: 'Indemnity bond. Maharashtra Stamp Act (Schedule I).',
};

const MIGRATION = 'Migration20261124010000_AllStatesReferenceData';

async function restStates(app: TestApp, token: string): Promise<StateJson[]> {
  const response = await rest<StateJson[]>(app, 'GET', '/stamps/states', { token });
  expect(response.status).toBe(200);
  return response.body.data!;
}

async function restArticles(app: TestApp, token: string, stateCode: string): Promise<ArticleJson[]> {
  const response = await rest<ArticleJson[]>(app, 'GET', '/stamps/articles', { token, query: { state_code: stateCode } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data!;
}

/** The text drawn on a page: inflates its content streams and decodes the strings of Tj operators. */
function pageText(doc: PDFDocument): string {
  const contents = doc.getPage(0).node.get(PDFName.of('Contents'));
  const refs: PDFObject[] = contents instanceof PDFArray ? contents.asArray() : contents ? [contents] : [];
  let text = '';
  for (const ref of refs) {
    const stream = doc.context.lookup(ref);
    if (!(stream instanceof PDFRawStream)) continue;
    const raw = stream.getContents();
    const decoded = Buffer.from(stream.dict.get(PDFName.of('Filter')) === PDFName.of('FlateDecode') ? inflateSync(raw) : raw);
    for (const match of decoded.toString('latin1').matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\)])*)\)\s*Tj/g)) {
      text += (match[1] !== undefined ? Buffer.from(match[1], 'hex').toString('latin1') : match[2]) + '\n';
    }
  }
  return text;
}

describe('stamp reference data', () => {
  /** Workers on, a vendor that answers at once and never refuses: procurement is deterministic. */
  let app: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ env: { STAMP_VENDOR_REJECTION_RATE: '0', STAMP_VENDOR_LATENCY_MS: '0' } });
    user = await app.createUser();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lists the 36 states and union territories with their names, on both faces', async () => {
    const states = await restStates(app, user.token);
    expect(states).toHaveLength(36);
    expect(states.map((state) => state.state_code).sort()).toEqual(CODES);
    for (const state of states) expect(state).toEqual({ state_code: state.state_code, name: STATES[state.state_code].name });

    const graphql = await gql(app, user.token, StampReferenceStatesDocument);
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data!.stampStates).toEqual(states);
  });

  it('lists each state’s seeded articles, the same on both faces', async () => {
    let total = 0;
    for (const code of CODES) {
      const articles = await restArticles(app, user.token, code);
      expect(articles, code).toHaveLength(STATES[code].articles);
      total += articles.length;
      for (const article of articles) {
        expect(article.article_id).toMatch(new RegExp(`^${code}-\\d+[A-Z]?$`));
        expect(article.name).toMatch(/^Article \d+[A-Z]? - \S/);
        expect(article.name.startsWith(`Article ${article.article_id.slice(code.length + 1)} - `), article.article_id).toBe(true);
        // Every description names the Act its article comes from.
        expect(article.description, article.article_id).toMatch(/Stamp Act/);
      }
      const [sampleId, sampleName] = STATES[code].sample;
      expect(
        articles.find((article) => article.article_id === sampleId),
        sampleId,
      ).toMatchObject({ name: sampleName });

      const graphql = await gql(app, user.token, StampReferenceArticlesDocument, { state_code: code.toLowerCase() });
      expect(graphql.errors, code).toBeUndefined();
      expect(graphql.data!.stampArticles).toEqual(articles);
    }
    expect(total).toBe(ARTICLE_COUNT);
  });

  it('gives every state the eleven common kinds of instrument', async () => {
    for (const code of CODES) {
      const articles = await restArticles(app, user.token, code);
      const missing = KINDS.filter(([, matches]) => !articles.some(matches)).map(([kind]) => kind);
      expect(missing, code).toEqual([]);
    }
  });

  it('keeps the earlier rows: same ids and names but MH-34, now Gift, which points at MH-35 for the indemnity bond', async () => {
    const seen = new Map<string, ArticleJson>();
    for (const code of ['DL', 'KA', 'MH', 'TN', 'UP', 'WB']) {
      for (const article of await restArticles(app, user.token, code)) seen.set(article.article_id, article);
    }
    for (const [id, name] of Object.entries(EARLIER_ARTICLES)) expect(seen.get(id)?.name, id).toBe(name);
    expect(seen.get('MH-34')!.description).toMatch(/^Gift, instrument of\b.* Maharashtra Stamp Act \(Schedule I\)\. .*MH-35/);
    expect(seen.get('MH-35')).toMatchObject({ name: 'Article 35 - Indemnity bond' });
    expect(seen.get('MH-36')!.description).toContain('MH-36A');
    for (const id of ['DL-35', 'KA-30', 'TN-35', 'UP-35', 'WB-35'])
      expect(seen.get(id)!.description, id).toMatch(/leave and licence/i);
  });

  describe('ordering in a state the migration added', () => {
    async function orderAndReadCertificate(stateCode: string, articleId: string): Promise<{ certificate: string; text: string }> {
      const created = await rest<{ client_id: string; state_code: string; article_id: string }>(
        app,
        'POST',
        '/stamps/create-order',
        {
          token: user.token,
          json: {
            state_code: stateCode.toLowerCase(),
            article_id: articleId.toLowerCase(),
            first_party_name: 'Lakshmi Reddy',
            second_party_name: 'Arjun Rao',
            stamp_duty_amount: 100,
            consideration_amount: 25000,
            quantity: 1,
          },
        },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.data).toMatchObject({ state_code: stateCode, article_id: articleId });
      const clientId = created.body.data!.client_id;

      let stampId: string | undefined;
      for (const deadline = Date.now() + 30_000; !stampId && Date.now() < deadline;) {
        const status = await rest<{ status_counts: { available: number }; stamps: { stamp_id: string; status: string }[] }>(
          app,
          'GET',
          '/stamps/order-status',
          { token: user.token, query: { client_id: clientId } },
        );
        expect(status.status).toBe(200);
        if (status.body.data!.status_counts.available === 1) stampId = status.body.data!.stamps[0].stamp_id;
        else await sleep(200);
      }
      expect(stampId, `order ${clientId} did not complete`).toBeDefined();

      const download = await rest<{ url: string }>(app, 'GET', '/stamps/download-pdf', {
        token: user.token,
        query: { client_id: stampId! },
      });
      expect(download.status).toBe(200);
      const fetched = await fetch(download.body.data!.url);
      expect(fetched.status).toBe(200);
      const pdf = await PDFDocument.load(new Uint8Array(await fetched.arrayBuffer()));
      const certificate = pdf.getTitle()!.replace('e-Stamp Certificate ', '');
      return { certificate, text: pageText(pdf) };
    }

    beforeAll(async () => {
      await creditWallet(app.services.orm.em.fork(), user.user_id, 100_000n);
    });

    it('Telangana (TG): the order completes and the certificate names the state and the article', async () => {
      const { certificate, text } = await orderAndReadCertificate('TG', 'TG-35');
      expect(certificate).toMatch(/^IN-TG\d+$/);
      for (const expected of [certificate, 'Telangana (TG)', 'TG-35: Article 35 - Lease', 'Lakshmi Reddy', 'Arjun Rao']) {
        expect(text).toContain(expected);
      }
    });

    it('Dadra and Nagar Haveli and Daman and Diu (DH), the longest name, fits the certificate', async () => {
      const { certificate, text } = await orderAndReadCertificate('DH', 'DH-5');
      expect(certificate).toMatch(/^IN-DH\d+$/);
      const heading = 'Dadra and Nagar Haveli and Daman and Diu (DH)';
      expect(text).toContain(heading);
      expect(text).toContain('DH-5: Article 5 - Agreement or memorandum of an agreement');
      // The heading is drawn unwrapped at x = 56 in 13 pt Helvetica: it must end inside the frame (A4 width less 28).
      const helvetica = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
      expect(56 + helvetica.widthOfTextAtSize(heading, 13)).toBeLessThan(595.28 - 28);
    });
  });

  it('the migration’s down() removes what it added and restores the descriptions it changed; up() adds them again', async () => {
    const before = new Map<string, ArticleJson>();
    for (const code of ['DL', 'KA', 'MH', 'TN', 'UP', 'WB']) {
      for (const article of await restArticles(app, user.token, code)) before.set(article.article_id, article);
    }
    const migrator = app.services.orm.getMigrator();
    const reverted = await migrator.down(MIGRATION);
    expect(reverted.map((migration) => migration.name)).toEqual([MIGRATION]);
    try {
      const states = await restStates(app, user.token);
      expect(states.map((state) => state.state_code).sort()).toEqual(['DL', 'KA', 'MH', 'TN', 'UP', 'WB']);
      const articles = new Map<string, ArticleJson>();
      for (const code of ['DL', 'KA', 'MH', 'TN', 'UP', 'WB']) {
        for (const article of await restArticles(app, user.token, code)) articles.set(article.article_id, article);
      }
      expect([...articles.keys()].sort()).toEqual(Object.keys(EARLIER_ARTICLES).sort());
      expect(articles.get('DL-35')!.description).toBe(
        'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).',
      );
      expect(articles.get('MH-34')).toEqual({ article_id: 'MH-34', ...ORIGINAL_MH_34 });
      expect(articles.get('MH-36')!.description).toBe(
        'Lease, including an under-lease or sub-lease and leave and licence agreements. Maharashtra Stamp Act (Schedule I).',
      );
    } finally {
      await migrator.up(MIGRATION);
    }
    expect(await restStates(app, user.token)).toHaveLength(36);
    const after = new Map<string, ArticleJson>();
    for (const code of ['DL', 'KA', 'MH', 'TN', 'UP', 'WB']) {
      for (const article of await restArticles(app, user.token, code)) after.set(article.article_id, article);
    }
    expect(after).toEqual(before);
  });
});
