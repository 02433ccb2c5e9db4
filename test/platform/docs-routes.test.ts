import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../src/modules';
import { startTestApp, type TestApp } from '../helpers/app';

/**
 * The route tables integrators read (README.md, docs/reference.md, docs/api.md, docs/signing.md) hold exactly the
 * routes the service serves, so that a route added, renamed or removed without its docs fails here.
 */
const ROOT = path.resolve(__dirname, '../..');
const OPENAPI = 'GET /api/v1/openapi.json';

function doc(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

/** The text between a heading line (its start) and the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const start = text.split('\n').findIndex((line) => line.startsWith(heading));
  expect(start, `heading ${heading}`).toBeGreaterThanOrEqual(0);
  const level = /^#+/.exec(heading)![0].length;
  const lines = text.split('\n').slice(start + 1);
  const end = lines.findIndex((line) => /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level);
  return lines.slice(0, end === -1 ? undefined : end).join('\n');
}

/** The table rows of a section (lines starting with `|`, the header and rule rows left out). */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    )
    .slice(1);
}

/** Every `METHOD /path` written in backticks in the cells, query strings and options left out. */
function routesIn(cells: string[], prefix: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(`\`(GET|POST|PUT|DELETE) (${prefix}[a-z0-9/._:-]+)`, 'g');
  for (const cell of cells) for (const match of cell.matchAll(pattern)) found.push(`${match[1]} ${match[2]}`);
  return found;
}

/** Rows of the form | `METHOD` | `/path` | ... |: the route of each. */
function splitRoutes(rows: string[][]): string[] {
  return rows.map(([method, route]) => `${method.replace(/`/g, '')} ${route.replace(/`/g, '')}`);
}

const sorted = (routes: Iterable<string>) => [...new Set(routes)].sort();

const restRoutes = sorted([...composition.restRoutes.map((route) => `${route.method} /api/v1${route.path}`), OPENAPI]);

describe('the docs list exactly the routes the service serves', () => {
  let app: TestApp;
  let signerRoutes: string[];

  beforeAll(async () => {
    app = await startTestApp();
    // The signer API's routes, read from the router the service mounts (the same factory, the same services).
    const mount = composition.mounts.find((candidate) => candidate.path === '/signer-api');
    const router = mount!.router(app.services) as Router;
    signerRoutes = sorted(
      router.stack.flatMap((layer) =>
        layer.route
          ? Object.keys((layer.route as unknown as { methods: Record<string, boolean> }).methods).map(
              (method) => `${method.toUpperCase()} /signer-api${layer.route!.path}`,
            )
          : [],
      ),
    );
  });
  afterAll(async () => app?.close());

  it('every documented REST route is served: 401 without a token (an unknown one is 404, another method 405)', async () => {
    const documented = sorted([
      ...routesIn(tableRows(section(doc('README.md'), '## REST: `/api/v1`')).flat(), '/api/v1/'),
      ...splitRoutes(tableRows(section(doc('docs/reference.md'), '### Route index'))),
      ...routesIn(tableRows(section(doc('docs/api.md'), '## Added routes')).flat(), '/api/v1/'),
    ]);
    for (const route of documented) {
      const [method, url] = route.split(' ');
      const response = await fetch(new URL(url, app.url), { method });
      expect(response.status, route).toBe(route === OPENAPI ? 200 : 401);
    }
    // And the probe tells: a route that is not served is not 401.
    expect((await fetch(new URL('/api/v1/esign/not-a-route', app.url))).status).toBe(404);
  });

  it("README's REST table lists every REST route, and only those", () => {
    const readme = tableRows(section(doc('README.md'), '## REST: `/api/v1`'));
    expect(sorted(readme.flatMap(([cell]) => routesIn([cell], '/api/v1/')))).toEqual(restRoutes);
  });

  it("docs/reference.md's route index lists every REST route with its GraphQL field, and only those", () => {
    const rows = tableRows(section(doc('docs/reference.md'), '### Route index'));
    expect(sorted(splitRoutes(rows))).toEqual(restRoutes);
    for (const route of composition.restRoutes) {
      const row = rows.find(([method, url]) => method === `\`${route.method}\`` && url === `\`/api/v1${route.path}\``)!;
      expect(row[4], `${route.method} ${route.path}`).toBe(`\`${route.operation.split('.')[1]}\``);
    }
  });

  it("docs/api.md's added routes are the route index's (added) routes", () => {
    const index = tableRows(section(doc('docs/reference.md'), '### Route index'));
    const added = sorted(splitRoutes(index.filter((row) => row[3] === '**(added)**')));
    const api = sorted(routesIn(tableRows(section(doc('docs/api.md'), '## Added routes')).flat(), '/api/v1/'));
    expect(api).toEqual(added);
  });

  it('README, docs/signing.md and docs/reference.md list every signer API route, and only those', async () => {
    expect(signerRoutes.length).toBeGreaterThan(5);
    const readme = tableRows(section(doc('README.md'), '### Signing')).flatMap(([cell]) => routesIn([cell], '/signer-api/'));
    const signing = tableRows(section(doc('docs/signing.md'), '## The signer API')).flatMap(([cell]) =>
      routesIn([cell], '/signer-api/'),
    );
    const reference = splitRoutes(tableRows(section(doc('docs/reference.md'), '## 10. The signer side')));
    expect(sorted(readme)).toEqual(signerRoutes);
    expect(sorted(signing)).toEqual(signerRoutes);
    expect(sorted(reference)).toEqual(signerRoutes);
    // Served, and closed to a caller without a signer token.
    for (const route of signerRoutes) {
      const [method, url] = route.split(' ');
      expect((await fetch(new URL(url, app.url), { method })).status, route).toBe(401);
    }
  });
});
