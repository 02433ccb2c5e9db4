import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Response } from 'express';
import { packageRoot } from '../../../platform/package-root';
import { escapeHtml } from '../../../platform/http/escape-html';
import type { AppServices } from '../../../platform/services';
import { AppError } from '../../../platform/errors';
import { signerByToken } from '../../esign/signer-side';
import { embedOriginsOf } from '../../users';
import { fontsDir } from '../../../platform/pdf-fonts';
import { LANGUAGES, isLanguage, type Language } from '../../../platform/i18n';
import { PAGE_CATALOG_JSON, pageMessage, shellLanguageOf } from './page-languages';

export const SIGNER_PAGE_PATH = '/sign';
/**
 * Where the eSign Service Provider sends the signer back (`?txn=`): an address without the signer token, so a
 * page of its own that returns to `/sign/{token}` (kept in the tab's sessionStorage by the signing page).
 */
export const SIGNER_RETURN_PATH = `${SIGNER_PAGE_PATH}/return`;
export const SIGNER_ASSETS = '/signer-assets';

/** Shown in the page header when a session carries no `email_template_overrides.company_name`. */
export const PLATFORM_NAME = 'Esign and E-Stamp';

/**
 * The page runs only its own modules and pdf.js (whose worker may start from a blob), talks only to this
 * origin, and may not be framed. No inline script or style: the shell links everything. Its only form that
 * leaves the origin is Aadhaar eSign's hand-over to the ESP: see `signerPageCsp`.
 */
export const SIGNER_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page's CSP for this deployment: `form-action` also names the origin of every configured eSign Service
 * Provider that is not this service (the page POSTs the signed request there; the built-in sandbox is 'self').
 */
export function signerPageCsp(publicUrl: string, espUrls: readonly string[]): string {
  const own = new URL(publicUrl).origin;
  const others = [...new Set(espUrls.map((url) => new URL(url).origin))].filter((origin) => origin !== own);
  if (others.length === 0) return SIGNER_PAGE_CSP;
  return SIGNER_PAGE_CSP.replace("form-action 'self'", ["form-action 'self'", ...others].join(' '));
}

/**
 * A DSC signer's page also talks to the bridge on the signer's own computer (DSC_BRIDGE_URL, loopback): only theirs,
 * so no other signer's page may reach a local port.
 */
export function withDscBridge(csp: string, bridgeUrl: string): string {
  return csp.replace("connect-src 'self'", `connect-src 'self' ${new URL(bridgeUrl).origin}`);
}

/** The page and its assets, read from the source tree (tsc does not copy them into dist/). */
const PAGE_DIR = path.join(packageRoot(__dirname), 'src', 'modules', 'signer-journey', 'page');
const ASSETS_DIR = path.join(PAGE_DIR, 'assets');
const PDFJS_DIR = path.dirname(require.resolve('pdfjs-dist/package.json'));
const PDFJS_VERSION = (JSON.parse(readFileSync(path.join(PDFJS_DIR, 'package.json'), 'utf8')) as { version: string }).version;
/** The version is in the path, so these files may be cached for as long as browsers like. */
const PDFJS_PATH = `${SIGNER_ASSETS}/pdfjs-${PDFJS_VERSION}`;
const PDFJS_BASE = `${PDFJS_PATH}/`;
const PDFJS_BUILDS = new Set(['pdf.min.mjs', 'pdf.worker.min.mjs']);
/** The page's own files (and its languages' fonts) change with deployments: browsers revalidate them every time. */
const REVALIDATE = {
  index: false as const,
  etag: true,
  setHeaders: (res: Response) => res.setHeader('Cache-Control', 'no-cache'),
};
/** intl-messageformat's single-file ES module build, the version the service formats its own messages with. */
const INTL_MESSAGEFORMAT = path.join(path.dirname(require.resolve('intl-messageformat')), 'intl-messageformat.iife.js');
/** The Noto Sans faces fonts.css names: one per script and weight. */
const WEB_FONTS = /^NotoSans[A-Za-z]+-(Regular|Bold)\.ttf$/;

/** A shell (the page, the return page) in each language: `{{t:key}}` from the page's catalog, `{{lang}}` its tag. */
function shellsOf(template: string): Map<Language, string> {
  return new Map(
    LANGUAGES.map((language) => [
      language,
      template
        .replaceAll('{{lang}}', language)
        .replace(/\{\{t:([a-z_.]+)\}\}/g, (_all, key: string) =>
          escapeHtml(pageMessage(language, key, { platform: PLATFORM_NAME })),
        ),
    ]),
  );
}

/**
 * `frameAncestors`: the origins the session's owner lets frame its signing pages (docs/embedding.md); none: no site
 * may, and X-Frame-Options says so too for browsers that predate CSP's `frame-ancestors`.
 */
function pageHeaders(res: Response, csp: string, frameAncestors: readonly string[] = []): void {
  res.setHeader(
    'Content-Security-Policy',
    frameAncestors.length > 0 ? csp.replace("frame-ancestors 'none'", `frame-ancestors ${frameAncestors.join(' ')}`) : csp,
  );
  res.setHeader('Cache-Control', 'no-store');
  // The signer token is in the page's URL: no Referer may carry it anywhere.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (frameAncestors.length === 0) res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Permissions-Policy', 'camera=(self), geolocation=(self), microphone=(), payment=(), usb=()');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
}

/**
 * The signer's web page (`invite_url` = `{PUBLIC_URL}/sign/{signer token}`): a static HTML shell whose
 * modules read the token from the address and drive the signer API with it, and the page's assets.
 * The shell is the same for every token, so it reveals nothing about a session; an unknown token is
 * found out by the first API call.
 */
export function createSignerPage(services: AppServices): express.Router {
  const router = express.Router();
  const csp = signerPageCsp(
    services.config.publicUrl,
    // 2.1: the page posts the request to the ESP's gateway; 3.2: it sends the browser to the ESP's page.
    Object.values(services.config.esps ?? {}).map((esp) => esp.authUrl ?? esp.url),
  );
  const fill = (file: string) =>
    readFileSync(path.join(PAGE_DIR, file), 'utf8')
      .replaceAll('{{platformName}}', escapeHtml(PLATFORM_NAME))
      .replaceAll('{{pdfjsBase}}', escapeHtml(PDFJS_BASE))
      .replaceAll('{{assets}}', escapeHtml(SIGNER_ASSETS))
      .replaceAll('{{dscBridgeUrl}}', escapeHtml(services.config.dsc.bridgeUrl))
      .replaceAll('{{dscDownloadUrl}}', escapeHtml(services.config.dsc.downloadUrl))
      .replaceAll('{{dscHelpUrl}}', escapeHtml(services.config.dsc.helpUrl));
  const shells = shellsOf(fill('sign.html'));
  const embedScript = readFileSync(path.join(PAGE_DIR, 'embed.js'), 'utf8');
  const returnShells = shellsOf(fill('sign-return.html'));
  // The shell speaks the browser's language; the page then speaks the signer's (their own, the sender's choice).
  const shellFor = (shellsByLanguage: Map<Language, string>, req: express.Request, res: Response) => {
    res.setHeader('Vary', 'Accept-Language');
    return shellsByLanguage.get(shellLanguageOf(req.headers['accept-language']))!;
  };

  // Before `/sign/:token`, which would take "return" for a token.
  router.get(SIGNER_RETURN_PATH, (req, res) => {
    pageHeaders(res, csp);
    res.type('html').send(shellFor(returnShells, req, res));
  });
  // Some ESPs send the browser back with a form POST (`txnref` in the body): the same page, by GET.
  router.post(SIGNER_RETURN_PATH, (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, req.originalUrl);
  });
  router.get(`${SIGNER_PAGE_PATH}/:token`, async (req, res, next) => {
    try {
      const { frameAncestors, signType } = await pageOptionsOf(services, req.params.token);
      pageHeaders(res, signType === 'dsc' ? withDscBridge(csp, services.config.dsc.bridgeUrl) : csp, frameAncestors);
      res.type('html').send(shellFor(shells, req, res));
    } catch (error) {
      next(error);
    }
  });
  // The host's side of an embedded signing page: mounts it in an iframe and relays its events (docs/embedding.md).
  router.get('/embed.js', (_req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.type('text/javascript').send(embedScript);
  });

  router.use(SIGNER_ASSETS, (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  // pdf.js: its two minified builds only, then the fonts it substitutes for the standard 14 when a PDF does
  // not embed them, and the CJK character maps.
  const forever = { immutable: true, maxAge: '365d', index: false as const };
  const pdfjsBuilds = express.static(path.join(PDFJS_DIR, 'build'), forever);
  router.use(PDFJS_PATH, (req, res, next) => (PDFJS_BUILDS.has(req.path.slice(1)) ? pdfjsBuilds(req, res, next) : next()));
  router.use(`${PDFJS_PATH}/standard_fonts`, express.static(path.join(PDFJS_DIR, 'standard_fonts'), forever));
  router.use(`${PDFJS_PATH}/cmaps`, express.static(path.join(PDFJS_DIR, 'cmaps'), forever));
  pageLanguageAssets(router);
  router.use(SIGNER_ASSETS, express.static(ASSETS_DIR, REVALIDATE));
  return router;
}

/**
 * What the page needs to speak the signer's language: each language's catalog, intl-messageformat to format it, and
 * the scripts' web fonts. All change with deployments only: revalidated every time (ETag), as the page's own files.
 */
function pageLanguageAssets(router: express.Router): void {
  router.get(`${SIGNER_ASSETS}/i18n/:file`, (req, res, next) => {
    const language = /^([a-z]{2,3})\.json$/.exec(req.params.file)?.[1];
    if (!isLanguage(language)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.type('json').send(PAGE_CATALOG_JSON.get(language));
  });
  router.get(`${SIGNER_ASSETS}/vendor/intl-messageformat.js`, (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-cache');
    res
      .type('text/javascript')
      .sendFile(INTL_MESSAGEFORMAT, { etag: true, cacheControl: false }, (error) => error && next(error));
  });
  const fonts = express.static(fontsDir(), REVALIDATE);
  router.use(`${SIGNER_ASSETS}/fonts`, (req, res, next) => (WEB_FONTS.test(req.path.slice(1)) ? fonts(req, res, next) : next()));
}

/**
 * What the page of this signer token may do beyond the shell's policy: be framed by its session owner's embed
 * origins, and reach the DSC bridge when the signer signs with one (neither for an unknown token).
 */
async function pageOptionsOf(services: AppServices, token: string): Promise<{ frameAncestors: string[]; signType?: string }> {
  const em = services.orm.em.fork();
  try {
    const signer = await signerByToken(em, token);
    return { frameAncestors: await embedOriginsOf(em, signer.session.user.id), signType: signer.signType };
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') return { frameAncestors: [] };
    throw error;
  }
}
