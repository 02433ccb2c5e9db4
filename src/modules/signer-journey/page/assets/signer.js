// The signer's page: reads the session, shows who asks and the document, walks through the requested
// checks in order, signs, then redirects or says it is done. Every state of the session and the signer
// gets a screen of its own; the document and the steps share one layout.

import { ApiError, describeError, getDocument, getJson, sentence, tokenFromPath } from './api.js';
import { announce, focusHeading, formatDateTime, h } from './dom.js';
import { loadPdfjs, showDocument } from './document-view.js';
import { aadhaarSignStep, consentSignStep, declineSection, faceStep, locationStep, otpCheckStep, stepTitle } from './steps.js';

const PLATFORM_NAME = document.querySelector('meta[name="platform-name"]').content;
const screen = document.getElementById('screen');

/** The signing layout while it is on screen: the document stays, the steps panel changes. */
let layout = null;
let leaveStep = [];

/**
 * Back from the eSign Service Provider (/sign/return sends the signer to `/sign/{token}?esp={txn}`): the first
 * screen focuses the signing step, where the outcome is, rather than the document's title. The parameter is
 * dropped from the address at once, so a reload is an ordinary visit.
 */
let backFromEsp = new URLSearchParams(location.search).has('esp');
if (backFromEsp) history.replaceState(history.state, '', location.pathname);

function brandOf(session) {
  const overrides = session?.email_template_overrides ?? {};
  return {
    name: overrides.company_name || PLATFORM_NAME,
    legal: overrides.legal_name || null,
    support: overrides.support_email || null,
  };
}

/** Who asks: the session's sender, else the company (or legal entity) it is branded with. */
function requesterOf(session) {
  const overrides = session?.email_template_overrides ?? {};
  return session?.sender || overrides.company_name || overrides.legal_name || null;
}

function applyBranding(session) {
  const brand = brandOf(session);
  document.getElementById('brand').textContent = brand.name;
  const legal = document.getElementById('brand-legal');
  legal.textContent = brand.legal ?? '';
  legal.hidden = !brand.legal;
  const support = document.getElementById('support');
  if (brand.support) {
    support.replaceChildren(
      'Questions about this document? Contact ',
      h('a', { href: `mailto:${brand.support}` }, brand.support),
      '.',
    );
  } else {
    const who = requesterOf(session);
    support.textContent = `Questions about this document? Contact ${who ?? 'the person who sent it to you'}.`;
  }
}

function leaveCurrentStep() {
  for (const cleanup of leaveStep) cleanup();
  leaveStep = [];
}

/** A whole-screen message (invalid link, cancelled, expired, done): a heading that takes focus, text, actions. */
function messageScreen({ title, paragraphs = [], actions = [], tone = 'info', screenName }) {
  leaveCurrentStep();
  layout = null;
  const heading = h('h1', { class: 'screen-title', tabindex: '-1' }, title);
  screen.replaceChildren(
    h(
      'section',
      { class: `message message--${tone}`, 'aria-labelledby': 'message-title', dataset: { screen: screenName } },
      Object.assign(heading, { id: 'message-title' }),
      ...paragraphs.filter(Boolean).map((text) => h('p', {}, text)),
      actions.length ? h('div', { class: 'actions' }, ...actions) : null,
    ),
  );
  focusHeading(heading);
}

const quoted = (filename) => `“${filename}”`;

function showInvalidLink() {
  document.title = `Signing link not valid – ${PLATFORM_NAME}`;
  messageScreen({
    screenName: 'invalid',
    tone: 'problem',
    title: 'This signing link is not valid',
    paragraphs: [
      'Check that you opened the whole link from your invitation. If it still does not work, ask the sender for a new link.',
    ],
  });
}

function showLoadProblem(error) {
  messageScreen({
    screenName: 'load-problem',
    tone: 'problem',
    title: 'The document could not be loaded',
    paragraphs: [describeError(error)],
    actions: [h('button', { type: 'button', class: 'button button--primary', on: { click: () => load() } }, 'Try again')],
  });
}

function downloadButton(session) {
  const error = h('p', { class: 'action-error', hidden: true });
  const button = h(
    'button',
    { type: 'button', class: 'button button--primary' },
    session.status === 'completed' ? 'Download the signed document' : 'Download the document',
  );
  button.addEventListener('click', async () => {
    error.hidden = true;
    try {
      const bytes = await getDocument();
      const url = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
      const link = h('a', { href: url, download: pdfName(session.filename), hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      announce('The download has started.');
    } catch (failure) {
      error.textContent = describeError(failure);
      error.hidden = false;
      announce(error.textContent, { assertive: true });
    }
  });
  return h('div', { class: 'download' }, button, error);
}

const pdfName = (filename) => (/\.pdf$/i.test(filename || '') ? filename : `${filename || 'document'}.pdf`);

function showFinished(view) {
  const { session, signer, whose_turn: turn } = view;
  const mine = signer.status === 'completed';
  const paragraphs = [];
  if (session.status === 'completed') paragraphs.push('Everyone has signed. The document is complete.');
  else if (turn) paragraphs.push(`It is now ${turn.full_name}’s turn to sign.`);
  if (session.allow_download) paragraphs.push('You can download a copy of the document.');
  else paragraphs.push('You can close this page.');
  messageScreen({
    screenName: 'done',
    tone: 'success',
    title: mine ? `You have signed ${quoted(session.filename)}` : `${quoted(session.filename)} is signed`,
    paragraphs,
    actions: session.allow_download ? [downloadButton(session)] : [],
  });
}

function showClosed(view) {
  const { session, signer } = view;
  const who = requesterOf(session) ?? 'the sender';
  if (session.status === 'cancelled') {
    return messageScreen({
      screenName: 'cancelled',
      tone: 'problem',
      title: 'This signing request was cancelled',
      paragraphs: [
        `${requesterOf(session) ?? 'The sender'} cancelled the request to sign ${quoted(session.filename)}. There is nothing more to do here.`,
      ],
    });
  }
  if (session.status === 'declined') {
    const mine = signer.status === 'declined';
    return messageScreen({
      screenName: 'declined',
      tone: mine ? 'info' : 'problem',
      title: mine ? `You declined to sign ${quoted(session.filename)}` : 'This signing request has ended',
      paragraphs: mine
        ? [
            `${who === 'the sender' ? 'The sender has' : `${who} has`} been told, with your reason: “${signer.decline_reason}”.`,
            'You can close this page.',
          ]
        : [
            `${session.declined_by ?? 'Another signer'} declined to sign ${quoted(session.filename)}, so nobody can sign it any more.`,
          ],
    });
  }
  if (session.status === 'expired') {
    return messageScreen({
      screenName: 'expired',
      tone: 'problem',
      title: 'This signing link has expired',
      paragraphs: [
        `The time to sign ${quoted(session.filename)} ran out${session.expires_at ? ` on ${formatDateTime(session.expires_at)}` : ''}.`,
        `Ask ${who} to send you a new request.`,
      ],
    });
  }
  return messageScreen({
    screenName: 'failed',
    tone: 'problem',
    title: 'You can no longer sign this document',
    paragraphs: [
      signer.status === 'failed'
        ? 'Signing did not succeed after too many attempts, so this link is closed.'
        : 'This link can no longer be used to sign.',
      signer.status === 'failed' && signer.esp_transaction?.error_message
        ? `The eSign Service Provider’s last answer: ${sentence(signer.esp_transaction.error_message)}`
        : null,
      `Contact ${who} if you still need to sign ${quoted(session.filename)}.`,
    ],
  });
}

const SIGN_TYPE_TEXT = {
  aadhaar: 'Aadhaar eSign',
  suresign: 'Electronic signature',
  pfx: 'Digital signature certificate of the sender',
};

function summaryOf(view) {
  const { session, signer } = view;
  const requester = requesterOf(session);
  const fact = (term, value) => (value ? h('div', { class: 'fact' }, h('dt', {}, term), h('dd', {}, value)) : null);
  const title = h('h1', { id: 'doc-title', class: 'doc-title', tabindex: '-1' }, session.filename);
  return {
    title,
    element: h(
      'section',
      { class: 'summary', 'aria-labelledby': 'doc-title' },
      h('p', { class: 'eyebrow' }, requester ? `${requester} asks you to sign` : 'You are asked to sign'),
      title,
      h(
        'dl',
        { class: 'facts' },
        fact('Requested by', requester),
        fact('Signing as', signer.full_name),
        fact('Reason', signer.reason),
        fact('How you sign', SIGN_TYPE_TEXT[signer.sign_type] ?? signer.sign_type),
        fact(
          'Signer',
          session.signer_count > 1 ? `${(session.signer_idx ?? 0) + 1} of ${session.signer_count} is signing now` : null,
        ),
        fact('Link valid until', session.expires_at ? formatDateTime(session.expires_at) : null),
      ),
    ),
  };
}

function pagesText(fields) {
  const pages = [...new Set(fields.map((field) => field.page + 1))].sort((a, b) => a - b);
  if (pages.length === 0) return 'Your signature is added to the document without a visible box.';
  const list = pages.length === 1 ? `page ${pages[0]}` : `pages ${pages.slice(0, -1).join(', ')} and ${pages.at(-1)}`;
  return `Your signature will be placed on ${list}, in the outlined ${fields.length === 1 ? 'box' : 'boxes'}.`;
}

const ZOOMS = [1, 1.5, 2, 3];

/**
 * Zoom for the pages (fit to width is 100%): a phone shows an A4 page's text at about 6 px, so the signer can
 * enlarge it; the pages then scroll sideways, and are drawn again at the new size. The browser's own pinch zoom
 * stays allowed (the viewport meta does not restrict scaling, and nothing sets touch-action).
 */
function zoomControls(pages) {
  let index = 0;
  const level = h('output', { class: 'zoom__level', 'aria-live': 'polite' }, '100%');
  const out = h('button', { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': 'Zoom out' }, '−');
  const into = h('button', { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': 'Zoom in' }, '+');
  const set = (next) => {
    index = Math.max(0, Math.min(ZOOMS.length - 1, next));
    pages.style.setProperty('--zoom', String(ZOOMS[index]));
    pages.dataset.zoom = String(ZOOMS[index]);
    // Zoomed, the list scrolls sideways: keyboard users reach it with Tab and scroll it with the arrow keys.
    if (index > 0) pages.setAttribute('tabindex', '0');
    else pages.removeAttribute('tabindex');
    level.textContent = `${Math.round(ZOOMS[index] * 100)}%`;
    out.setAttribute('aria-disabled', String(index === 0));
    into.setAttribute('aria-disabled', String(index === ZOOMS.length - 1));
    pages.redraw?.();
  };
  out.addEventListener('click', () => set(index - 1));
  into.addEventListener('click', () => set(index + 1));
  out.setAttribute('aria-disabled', 'true');
  return h('div', { class: 'zoom', role: 'group', 'aria-label': 'Zoom the pages' }, out, level, into);
}

/** Summary, document and the (empty) steps panel; the document loads in the background. */
function buildLayout(view) {
  leaveCurrentStep();
  const summary = summaryOf(view);
  const fields = Array.isArray(view.signer.fields) ? view.signer.fields : [];
  const pages = h('ol', { class: 'pages', 'aria-label': 'Pages of the document' });
  const docStatus = h('p', { class: 'doc-status' }, 'Loading the document…');
  const documentSection = h(
    'section',
    { class: 'document', 'aria-labelledby': 'document-title' },
    h(
      'div',
      { class: 'document__head' },
      h('h2', { id: 'document-title' }, 'Document'),
      h('p', { class: 'hint' }, pagesText(fields)),
      h('a', { class: 'jump-link', href: '#steps' }, 'Go to the signing steps'),
    ),
    docStatus,
    pages,
  );
  const panel = h('section', { id: 'steps', class: 'steps', 'aria-label': 'Signing steps', tabindex: '-1' });
  // On a phone the panel comes after every page: this bar stays at the bottom of the screen while the document
  // scrolls by (CSS sticky: it stops above the panel once the panel is in view) and takes the signer to the step.
  const actionButton = h('button', { type: 'button', class: 'button button--primary action-bar__button' }, 'Sign');
  actionButton.addEventListener('click', () => {
    const heading = panel.querySelector('h2');
    if (heading) focusHeading(heading);
    else panel.focus();
  });
  const actionBar = h('div', { class: 'action-bar', dataset: { actionBar: '' } }, actionButton);
  documentSection.querySelector('.document__head').append(zoomControls(pages));
  screen.replaceChildren(summary.element, h('div', { class: 'layout' }, documentSection, actionBar, panel));
  layout = { panel, title: summary.title, actionButton };

  getDocument()
    .then((bytes) =>
      showDocument(pages, bytes, fields, {
        onRendered: (rendered, count) => {
          if (rendered === count) docStatus.hidden = true;
        },
      }),
    )
    .then((count) => {
      docStatus.textContent = `${count} ${count === 1 ? 'page' : 'pages'}.`;
      documentSection.dataset.pages = String(count);
    })
    .catch((failure) => {
      docStatus.textContent =
        failure instanceof ApiError
          ? `The document could not be shown: ${describeError(failure)}`
          : 'The document could not be shown.';
      docStatus.classList.add('action-error');
    });
  return layout;
}

function progressOf(view, current) {
  const kinds = [...(view.checks ?? []).map((check) => check.kind), 'sign'];
  const doneKinds = new Set((view.checks ?? []).filter((check) => check.status === 'passed').map((check) => check.kind));
  if (kinds.length === 1) return null;
  return h(
    'ol',
    { class: 'progress', 'aria-label': 'Progress' },
    kinds.map((kind) => {
      const state = kind === current ? 'current' : doneKinds.has(kind) ? 'done' : 'todo';
      return h(
        'li',
        { class: `progress__item progress__item--${state}`, 'aria-current': state === 'current' ? 'step' : null },
        stepTitle(kind, view.signer.sign_type),
        h('span', { class: 'visually-hidden' }, state === 'done' ? ' (done)' : state === 'current' ? ' (current step)' : ''),
      );
    }),
  );
}

/** The phone's action bar names the current step; its arrow is decoration, and the name says where it goes. */
function labelActionBar(title) {
  layout.actionButton.replaceChildren(
    title,
    h('span', { class: 'visually-hidden' }, ': go to the signing steps'),
    h('span', { 'aria-hidden': 'true' }, ' ↓'),
  );
}

/** What the steps need from the page (see steps.js). */
function stepContext(view, slot) {
  return {
    heading: (text) => h('h2', { class: 'step-title', id: 'step-heading', tabindex: '-1' }, text),
    refresh: (message) => load({ message }),
    signed: (answer) => finishSigning(answer),
    onLeave: (cleanup) => leaveStep.push(cleanup),
    replaceStep: (step) => {
      leaveCurrentStep();
      slot.replaceChildren(step);
      focusHeading(step.querySelector('h2'));
    },
    failed: (error) => {
      if (!(error instanceof ApiError)) return false;
      if (error.status === 401) {
        showInvalidLink();
        return true;
      }
      // The session moved on (cancelled, expired, someone else's turn, a failed signer, a check still
      // missing): show where it is now, with the server's reason.
      if (error.status === 409) {
        load({ message: describeError(error) });
        return true;
      }
      return false;
    },
  };
}

/** A message that brought the signer back to this panel (why the last action did not go through). */
const noticeOf = (message) => (message ? h('p', { class: 'action-error panel-notice' }, message) : null);

function showSteps(view, { focus, message }) {
  const current = view.next_check ?? 'sign';
  const check = (view.checks ?? []).find((candidate) => candidate.kind === current) ?? { kind: current };
  const slot = h('div', { class: 'step-slot' });
  const ctx = stepContext(view, slot);
  leaveCurrentStep();
  let step;
  if (current === 'email' || current === 'mobile') step = otpCheckStep(ctx, check);
  else if (current === 'location') step = locationStep(ctx, check);
  else if (current === 'face') step = faceStep(ctx, check);
  else if (view.signer.sign_type === 'aadhaar') step = aadhaarSignStep(ctx, view);
  else step = consentSignStep(ctx, view);
  slot.append(step);
  labelActionBar(stepTitle(current, view.signer.sign_type));
  layout.panel.replaceChildren(
    progressOf(view, current) ?? '',
    noticeOf(message) ?? '',
    slot,
    declineSection(() => load()),
  );
  if (focus === 'step') focusHeading(step.querySelector('h2'));
}

function showWaiting(view, { focus, message }) {
  leaveCurrentStep();
  const turn = view.whose_turn;
  const check = h('button', { type: 'button', class: 'button button--secondary' }, 'Check again');
  check.addEventListener('click', () => load());
  const heading = h('h2', { class: 'step-title', id: 'step-heading', tabindex: '-1' }, 'Not your turn yet');
  labelActionBar('Not your turn yet');
  layout.panel.replaceChildren(
    noticeOf(message) ?? '',
    h(
      'div',
      { class: 'step', dataset: { step: 'waiting' } },
      heading,
      h(
        'p',
        { class: 'whose-turn' },
        turn ? `It is ${turn.full_name}’s turn to sign.` : 'Another signer has to sign before you.',
      ),
      h(
        'p',
        {},
        'Signers sign one after the other. Open this link again once it is your turn; you can read the document meanwhile.',
      ),
      check,
    ),
    declineSection(() => load()),
  );
  if (focus === 'step') focusHeading(heading);
}

function finishSigning(view) {
  leaveCurrentStep();
  const target = view.session.redirect_url;
  if (target && /^https?:$/.test(safeUrl(target)?.protocol ?? '')) {
    messageScreen({
      screenName: 'redirecting',
      tone: 'success',
      title: 'You have signed the document',
      paragraphs: ['Taking you back to the sender’s site…'],
    });
    location.assign(target);
    return;
  }
  showFinished(view);
}

function safeUrl(text) {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** Reads the session and shows the screen for it. The first load focuses the title, later ones the new step. */
async function load({ message } = {}) {
  let view;
  try {
    view = await getJson('/session');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) showInvalidLink();
    else showLoadProblem(error);
    return;
  }
  const first = !layout;
  applyBranding(view.session);
  document.title = `Sign ${view.session.filename} – ${brandOf(view.session).name}`;
  const { session, signer } = view;

  const ended = ['cancelled', 'expired', 'declined'].includes(session.status);
  if (ended || signer.status === 'failed') showClosed(view);
  else if (session.status === 'completed' || signer.status === 'completed') showFinished(view);
  else {
    if (!layout) buildLayout(view);
    const titleFirst = first && !backFromEsp;
    const focus = titleFirst ? 'title' : 'step';
    if (signer.eligible) showSteps(view, { focus, message });
    else showWaiting(view, { focus, message });
    if (titleFirst) focusHeading(layout.title);
  }
  backFromEsp = false;
  if (message) announce(message, { assertive: true });
}

if (tokenFromPath()) {
  // pdf.js loads while the session is read.
  loadPdfjs().catch(() => undefined);
  load();
  // Back from the ESP's pages through the browser's history, restored as it was left ("Opening Aadhaar eSign…"):
  // read the session again.
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) load();
  });
} else {
  showInvalidLink();
}
