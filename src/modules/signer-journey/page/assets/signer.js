// The signer's page: reads the session, shows who asks and the document, walks through the requested
// checks in order, signs, then redirects or says it is done. Every state of the session and the signer
// gets a screen of its own; the document and the steps share one layout.

import { ApiError, describeError, getJson, tokenFromPath } from './api.js';
import { announce, focusHeading, h } from './dom.js';
import { applyBranding, brandOf, PLATFORM_NAME } from './branding.js';
import { loadPdfjs } from './document-view.js';
import { documentsOf, envelopeViewer } from './envelope.js';
import {
  aadhaarSignStep,
  consentSignStep,
  declineSection,
  dscSignStep,
  faceStep,
  fieldsStep,
  focusField,
  hasFields,
  locationStep,
  otpCheckStep,
  stepTitle,
} from './steps.js';
import { closedMessage, finishedMessage } from './ended.js';
import { summaryOf, zoomControls } from './summary.js';
import { embedded, emit, listenForLanguage, observe } from './embedded.js';
import { currentLanguage, preferredLanguage, t, tParts, useLanguage } from './i18n.js';
import { renderLanguageSwitch, switchLanguage } from './language-switch.js';

const screen = document.getElementById('screen');

/** The signing layout while it is on screen: the document stays, the steps panel changes. */
let layout = null;
let leaveStep = [];
/**
 * The signer went through the fields step on this visit (it comes back after a reload, with what was kept, so the
 * signer sees the values before signing).
 */
let fieldsConfirmed = false;

/**
 * Back from the eSign Service Provider (/sign/return sends the signer to `/sign/{token}?esp={txn}`): the first
 * screen focuses the signing step, where the outcome is, rather than the document's title. The parameter is
 * dropped from the address at once, so a reload is an ordinary visit.
 */
let backFromEsp = new URLSearchParams(location.search).has('esp');
if (backFromEsp) history.replaceState(history.state, '', location.pathname);

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

function showInvalidLink() {
  document.title = t('page.invalid_link_document_title', { platform: PLATFORM_NAME });
  messageScreen({
    screenName: 'invalid',
    tone: 'problem',
    title: t('page.invalid_link_title'),
    paragraphs: [t('page.invalid_link_text')],
  });
}

function showLoadProblem(error) {
  emit('error', { code: 'load_failed', message: describeError(error) });
  messageScreen({
    screenName: 'load-problem',
    tone: 'problem',
    title: t('page.load_problem_title'),
    paragraphs: [describeError(error)],
    actions: [h('button', { type: 'button', class: 'button button--primary', on: { click: () => load() } }, t('page.try_again'))],
  });
}

/**
 * Summary, document and the (empty) steps panel; the document loads in the background. An envelope of several
 * documents shows them one after another (envelope.js), the first first.
 */
function buildLayout(view) {
  leaveCurrentStep();
  const summary = summaryOf(view);
  const pages = h('ol', { class: 'pages', 'aria-label': t('page.pages_label') });
  const docStatus = h('p', { class: 'doc-status' }, t('page.loading_document'));
  const hint = h('p', { class: 'hint' });
  const documentSection = h(
    'section',
    { class: 'document', 'aria-labelledby': 'document-title' },
    h(
      'div',
      { class: 'document__head' },
      h('h2', { id: 'document-title' }, t('page.documents_heading', { count: documentsOf(view).length })),
      hint,
      h('a', { class: 'jump-link', href: '#steps' }, t('page.jump_to_steps')),
    ),
  );
  const viewer = envelopeViewer(view, { pages, docStatus, hint, documentSection, onBoxChosen: focusField });
  documentSection.append(...(viewer.navigation ? [viewer.navigation] : []), docStatus, pages);
  const panel = h('section', { id: 'steps', class: 'steps', 'aria-label': t('page.steps_label'), tabindex: '-1' });
  // On a phone the panel comes after every page: this bar stays at the bottom of the screen while the document
  // scrolls by (CSS sticky: it stops above the panel once the panel is in view) and takes the signer to the step.
  const actionButton = h('button', { type: 'button', class: 'button button--primary action-bar__button' }, t('page.sign'));
  actionButton.addEventListener('click', () => {
    const heading = panel.querySelector('h2');
    if (heading) focusHeading(heading);
    else panel.focus();
  });
  const actionBar = h('div', { class: 'action-bar', dataset: { actionBar: '' } }, actionButton);
  documentSection.querySelector('.document__head').append(zoomControls(pages));
  screen.replaceChildren(summary.element, h('div', { class: 'layout' }, documentSection, actionBar, panel));
  layout = { panel, title: summary.title, actionButton };
  viewer.show(0);
  return layout;
}

function progressOf(view, current) {
  const kinds = [...(view.checks ?? []).map((check) => check.kind), ...(hasFields(view) ? ['fields'] : []), 'sign'];
  const doneKinds = new Set((view.checks ?? []).filter((check) => check.status === 'passed').map((check) => check.kind));
  if (fieldsConfirmed) doneKinds.add('fields');
  if (kinds.length === 1) return null;
  return h(
    'ol',
    { class: 'progress', 'aria-label': t('page.progress_label') },
    kinds.map((kind) => {
      const state = kind === current ? 'current' : doneKinds.has(kind) ? 'done' : 'todo';
      return h(
        'li',
        { class: `progress__item progress__item--${state}`, 'aria-current': state === 'current' ? 'step' : null },
        stepTitle(kind, view.signer.sign_type),
        h(
          'span',
          { class: 'visually-hidden' },
          state === 'done' ? ` ${t('page.progress_done')}` : state === 'current' ? ` ${t('page.progress_current')}` : '',
        ),
      );
    }),
  );
}

/** The phone's action bar names the current step; its arrow is decoration, and the name says where it goes. */
function labelActionBar(title) {
  layout.actionButton.replaceChildren(
    ...tParts('page.action_bar', { step: title }, { hidden: (children) => h('span', { class: 'visually-hidden' }, children) }),
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
      // Signing refused while a required field is empty: back to the fields, the empty ones marked.
      if (error.code === 'missing_fields' && error.problems.some((problem) => problem.field.startsWith('values.'))) {
        fieldsConfirmed = false;
        showSteps(view, { focus: 'step', failure: error });
        return true;
      }
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

/** The step after the checks: the fields while they are not confirmed on this visit, then the signature. */
const stepAfterChecks = (view) => (hasFields(view) && !fieldsConfirmed ? 'fields' : 'sign');

function showSteps(view, { focus, message, failure }) {
  const current = view.next_check ?? stepAfterChecks(view);
  const check = (view.checks ?? []).find((candidate) => candidate.kind === current) ?? { kind: current };
  const slot = h('div', { class: 'step-slot' });
  const ctx = stepContext(view, slot);
  leaveCurrentStep();
  let step;
  if (current === 'email' || current === 'mobile') step = otpCheckStep(ctx, check);
  else if (current === 'location') step = locationStep(ctx, check);
  else if (current === 'face') step = faceStep(ctx, check);
  else if (current === 'fields') step = fieldsStep(ctx, view, { done: (next) => confirmFields(next), failure });
  else if (view.signer.sign_type === 'aadhaar') step = aadhaarSignStep(ctx, view);
  else if (view.signer.sign_type === 'dsc') step = dscSignStep(ctx, view);
  else step = consentSignStep(ctx, view);
  slot.append(step);
  emit('step', { step: current });
  labelActionBar(stepTitle(current, view.signer.sign_type));
  layout.panel.replaceChildren(
    progressOf(view, current) ?? '',
    noticeOf(message) ?? '',
    slot,
    changeFieldsButton(view, current) ?? '',
    declineSection(() => load()),
  );
  if (focus === 'step') focusHeading(step.querySelector('h2'));
}

/** On the signing step, the way back to the fields; not while the ESP holds the values (the service refuses changes). */
function changeFieldsButton(view, current) {
  const atEsp = ['pending', 'held', 'completed'].includes(view.signer.esp_transaction?.status);
  if (current !== 'sign' || !hasFields(view) || atEsp) return null;
  const back = () => {
    fieldsConfirmed = false;
    showSteps(view, { focus: 'step' });
  };
  return h(
    'button',
    { type: 'button', class: 'button button--secondary change-fields', on: { click: back } },
    t('page.change_fields'),
  );
}

function confirmFields(view) {
  fieldsConfirmed = true;
  announce(t('page.fields_saved'));
  load({ view });
}

function showWaiting(view, { focus, message }) {
  leaveCurrentStep();
  const turn = view.whose_turn;
  const check = h('button', { type: 'button', class: 'button button--secondary' }, t('page.check_again'));
  check.addEventListener('click', () => load());
  const heading = h('h2', { class: 'step-title', id: 'step-heading', tabindex: '-1' }, t('page.not_your_turn'));
  labelActionBar(t('page.not_your_turn'));
  layout.panel.replaceChildren(
    noticeOf(message) ?? '',
    h(
      'div',
      { class: 'step', dataset: { step: 'waiting' } },
      heading,
      h('p', { class: 'whose-turn' }, t('page.whose_turn', { who: turn ? 'named' : 'other', name: turn?.full_name ?? '' })),
      h('p', {}, t('page.one_after_another')),
      check,
    ),
    declineSection(() => load()),
  );
  if (focus === 'step') focusHeading(heading);
}

function finishSigning(view) {
  leaveCurrentStep();
  observe(view);
  const target = view.session.redirect_url;
  // Embedded, the host hears `signed` and decides where to go: the frame stays on the finished screen.
  if (!embedded && target && /^https?:$/.test(safeUrl(target)?.protocol ?? '')) {
    messageScreen({
      screenName: 'redirecting',
      tone: 'success',
      title: t('page.redirect_title'),
      paragraphs: [t('page.redirect_text')],
    });
    location.assign(target);
    return;
  }
  messageScreen(finishedMessage(view));
}

function safeUrl(text) {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * The language the page speaks is settled once the session is read: the signer's own (the sender's choice, or theirs
 * from an earlier visit), else the browser's, else English. A switch on this visit settles it again.
 */
let languageSettled = false;

async function settleLanguage(view) {
  if (languageSettled) return;
  languageSettled = true;
  const wanted = preferredLanguage(view.signer.language);
  if (wanted !== currentLanguage()) await useLanguage(wanted).catch(() => undefined);
  renderLanguageSwitch(redraw);
}

/** Draws the whole screen again (a new language): the layout is rebuilt from a fresh read of the session. */
async function redraw() {
  leaveCurrentStep();
  layout = null;
  await load();
}

/** Reads the session and shows the screen for it. The first load focuses the title, later ones the new step. */
async function load({ message, view: known } = {}) {
  let view = known;
  try {
    view ??= await getJson('/session');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) showInvalidLink();
    else showLoadProblem(error);
    return;
  }
  await settleLanguage(view);
  const first = !layout;
  observe(view);
  applyBranding(view.session);
  document.title = t('page.document_title', { filename: view.session.filename, brand: brandOf(view.session).name });
  const { session, signer } = view;

  const ended = ['cancelled', 'expired', 'declined'].includes(session.status);
  if (ended || signer.status === 'failed') messageScreen(closedMessage(view));
  else if (session.status === 'completed' || signer.status === 'completed') messageScreen(finishedMessage(view));
  else {
    if (!layout) buildLayout(view);
    // An Aadhaar signer back from the ESP, or with a transaction open there, confirmed their values before leaving
    // (the ESP signs them; the service refuses changes until it answers): the signing step shows where that stands.
    if (backFromEsp || ['pending', 'held', 'completed'].includes(signer.esp_transaction?.status)) fieldsConfirmed = true;
    const titleFirst = first && !backFromEsp;
    const focus = titleFirst ? 'title' : 'step';
    if (signer.eligible) showSteps(view, { focus, message });
    else showWaiting(view, { focus, message });
    if (titleFirst) focusHeading(layout.title);
  }
  backFromEsp = false;
  if (message) announce(message, { assertive: true });
}

// The shell's language (the browser's, as the service read Accept-Language) until the session says the signer's.
await useLanguage(document.documentElement.lang || 'en').catch(() => useLanguage('en'));
// The host of an embedded page may set the language (docs/embedding.md): as the signer's own switch.
listenForLanguage((language) => switchLanguage(language, redraw));

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
