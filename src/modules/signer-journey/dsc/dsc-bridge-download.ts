import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import { zipSync } from 'fflate';
import { escapeHtml } from '../../../platform/http/escape-html';
import { packageRoot } from '../../../platform/package-root';
import type { AppServices } from '../../../platform/services';

/** Where the signing page sends a DSC signer who has no bridge yet: its help, its README and its download. */
export const DSC_BRIDGE_PATH = '/dsc-bridge';

const BRIDGE_DIR = path.join(packageRoot(__dirname), 'bridge');
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The bridge as signers download it: this repository's bridge/ (its package.json, README and sources) in one ZIP made
 * once at start, so the program a signer runs is the one this service was built with; and a help page naming this
 * service's own origin in the start command, which the bridge must be given (`--origin`).
 */
export function createDscBridgeRouter(services: AppServices): express.Router {
  const router = express.Router();
  const files = bridgeFiles();
  const archive = Buffer.from(
    zipSync(Object.fromEntries(files.map((file) => [`esign-dsc-bridge/${file}`, readFileSync(path.join(BRIDGE_DIR, file))]))),
  );
  const readme = files.includes('README.md') ? readFileSync(path.join(BRIDGE_DIR, 'README.md'), 'utf8') : '';
  const origin = new URL(services.config.publicUrl).origin;
  const page = helpPage(origin, services.config.dsc.downloadUrl);
  const headers = (res: express.Response) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
  };

  router.get('/', (_req, res) => {
    headers(res);
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.type('html').send(page);
  });
  router.get('/README.md', (_req, res) => {
    headers(res);
    res.type('text/markdown; charset=utf-8').send(readme);
  });
  router.get('/esign-dsc-bridge.zip', (_req, res) => {
    headers(res);
    res.setHeader('Content-Disposition', 'attachment; filename="esign-dsc-bridge.zip"');
    res.type('application/zip').send(archive);
  });
  return router;
}

/** The bridge's own files: what it runs with and how to run it, never a node_modules a checkout may hold. */
function bridgeFiles(): string[] {
  if (!existsSync(BRIDGE_DIR)) return [];
  const top = ['package.json', 'tsconfig.json', 'README.md'].filter((file) => existsSync(path.join(BRIDGE_DIR, file)));
  const sources = readdirSync(path.join(BRIDGE_DIR, 'src'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `src/${file}`);
  return [...top, ...sources.sort()];
}

function helpPage(origin: string, downloadUrl: string): string {
  const start = `node src/main.ts --module &lt;your token's PKCS#11 library&gt; --origin ${escapeHtml(origin)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign with your DSC token: the bridge</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f3f4f6; color: #111827; }
main { max-width: 46rem; margin: 2rem auto; background: #fff; padding: 1.5rem 2rem; border-radius: 8px; }
code, pre { font-size: 0.9rem; background: #eef2ff; padding: 0.1rem 0.3rem; overflow-wrap: anywhere; white-space: pre-wrap; }
a { color: #1e3a8a; }
</style>
</head>
<body>
<main>
<h1>Sign with your DSC token</h1>
<p>To sign with the Digital Signature Certificate on your USB token, a small program, the <strong>DSC bridge</strong>,
runs on your own computer. It talks to the token through its driver (PKCS#11) and asks for the token's PIN on its own
page: your PIN never reaches the website.</p>
<ol>
<li>Install your token's driver from its vendor (ePass2003, ProxKey, mToken, SafeNet...) and <a href="https://nodejs.org/">Node.js 24</a>.</li>
<li><a href="${escapeHtml(downloadUrl)}">Download the bridge</a> and unzip it; in its folder run <code>npm install</code> once.</li>
<li>Start it, naming your token's library and this website:<pre>${start}</pre>
The <a href="${escapeHtml(DSC_BRIDGE_PATH)}/README.md">bridge's guide</a> lists where each token's library usually is on Windows, macOS and Linux, and how to start the bridge when you log in.</li>
<li>Plug in your token and go back to the signing page: it finds the bridge and lists your certificates.</li>
</ol>
</main>
</body>
</html>
`;
}
