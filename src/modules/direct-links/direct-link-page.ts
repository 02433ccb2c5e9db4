import express, { type Request, type Response } from 'express';
import { requestOrigin } from '../../platform/auth/request-origin';
import { escapeHtml } from '../../platform/http/escape-html';
import { AppError, findAppError } from '../../platform/errors';
import { sendError, sendSuccess } from '../../platform/rest/envelope';
import type { AppServices } from '../../platform/services';
import { Template } from '../templates';
import { DIRECT_LINK_PATH } from './manage-direct-links';
import { startFromDirectLink, usableLink } from './use-direct-link';
import type { VisitorContact } from './link-request';

const PAGE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The public side of a template's link (docs/direct-links.md): `GET /d/{slug}` is a form (no script) for the
 * visitor's name and contact; `POST /d/{slug}` (the form, or JSON) makes their session and sends them on to sign it
 * (303 to the signing page; JSON answers `{client_id, invite_url}` in the envelope). Any link that cannot start a
 * session now answers 404 alike.
 */
export function createDirectLinkPages(services: AppServices): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const json = express.json({ limit: '16kb' });

  router.get(`${DIRECT_LINK_PATH}/:slug`, async (req, res, next) => {
    try {
      const link = await usableLink(services, req.params.slug);
      if (!link) return page(res, 404, unavailable());
      const template = await services.orm.em.fork().findOne(Template, { id: link.template.id, deletedAt: null });
      if (!template) return page(res, 404, unavailable());
      page(res, 200, visitorForm(template.name, {}, []));
    } catch (error) {
      next(error);
    }
  });

  router.post(`${DIRECT_LINK_PATH}/:slug`, form, json, async (req, res, next) => {
    const wantsJson = Boolean(req.is('application/json'));
    const visitor = contactOf(req);
    try {
      const started = await startFromDirectLink(services, req.params.slug, visitor, requestOrigin(req));
      if (wantsJson) return sendSuccess(res, { client_id: started.sessionId, invite_url: started.inviteUrl });
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, started.inviteUrl);
    } catch (error) {
      const refusal = findAppError(error);
      if (!refusal) return next(error);
      if (wantsJson) return sendError(res, refusal);
      if (refusal.status === 404) return page(res, 404, unavailable());
      const link = await usableLink(services, req.params.slug);
      const template = link && (await services.orm.em.fork().findOne(Template, { id: link.template.id }));
      page(res, refusal.status, visitorForm(template?.name ?? 'Sign a document', visitor, problemsOf(refusal)));
    }
  });
  return router;
}

function contactOf(req: Request): VisitorContact {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (key: string) => (typeof body[key] === 'string' && body[key] !== '' ? (body[key] as string) : null);
  return { full_name: text('full_name'), email: text('email'), mobile: text('mobile'), country_code: text('country_code') };
}

/** What to say on the form: each problem of the visitor's own fields by the field, anything else as it is. */
function problemsOf(error: AppError): string[] {
  if (error.code === 'rate_limited') return ['Too many signing requests from your network through this link. Try again later.'];
  if (error.code === 'stamp_combination_not_found' || error.code === 'inventory_conflict')
    return ['This link cannot start a document right now. Please contact the sender.'];
  const problems = (error.errors ?? []).map((problem) => `${fieldName(problem.field)}: ${problem.problem}`);
  return problems.length > 0 ? problems : [error.message];
}

const fieldName = (field: string) => {
  const key = field.split('.').pop() ?? field;
  return { full_name: 'Full name', email: 'Email', mobile: 'Mobile', country_code: 'Country code' }[key] ?? field;
};

function page(res: Response, status: number, body: string): void {
  res.status(status);
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.type('html').send(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="robots" content="noindex, nofollow" />
    <title>Sign a document</title>
    <link rel="stylesheet" href="/signer-assets/signer.css" />
  </head>
  <body>
    <main id="main" class="screen">${body}</main>
  </body>
</html>`);
}

const unavailable = () =>
  `<section class="message message--problem" data-screen="link-unavailable"><h1 class="screen-title">This link is not available</h1>
<p>It may have expired or been turned off. Ask the sender for a new one.</p></section>`;

function visitorForm(title: string, values: VisitorContact, problems: string[]): string {
  const input = (name: keyof VisitorContact, label: string, type: string, autocomplete: string) =>
    `<p class="field"><label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${type}" autocomplete="${autocomplete}" value="${escapeHtml(values[name] ?? '')}" /></p>`;
  const errors = problems.length
    ? `<div class="action-error" role="alert"><p>Please check:</p><ul>${problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join('')}</ul></div>`
    : '';
  return `<section data-screen="direct-link"><h1 class="screen-title">${escapeHtml(title)}</h1>
<p>Give your name and how to reach you (an email address, or a mobile number), then sign the document.</p>
${errors}
<form method="post" class="stack">
${input('full_name', 'Full name', 'text', 'name')}
${input('email', 'Email', 'email', 'email')}
${input('country_code', 'Country code (for a mobile number, e.g. 91)', 'text', 'tel-country-code')}
${input('mobile', 'Mobile', 'tel', 'tel-national')}
<p><button type="submit" class="button button--primary">Continue to the document</button></p>
</form></section>`;
}
