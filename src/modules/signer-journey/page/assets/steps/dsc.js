// Signing with the signer's own Digital Signature Certificate (DSC) on a USB token, through the DSC bridge on their
// computer (steps/dsc-bridge.js). The step finds the bridge, lists the certificates of the tokens plugged in, takes the
// signer's consent, has the service check the chosen certificate (/dsc/start), then for each document asks the bridge
// to sign its digest: the signer approves in the bridge's own window, typing the token's PIN there (never on this
// page), and the page hands the signatures to the service (/dsc/complete).

import { ApiError, describeError, getJson, postJson } from '../api.js';
import { actionError, announce, busy, focusHeading, h } from '../dom.js';
import { t } from '../i18n.js';
import { consentField, report, requireConsent } from './feedback.js';
import {
  BridgeError,
  bridgeSettings,
  chainFor,
  readBridge,
  requestSignature,
  signingCertificatesOf,
  waitForApproval,
} from './dsc-bridge.js';
import {
  approveScreen,
  bridgeProblemScreen,
  bridgeRefusalScreen,
  certificateChoice,
  completingScreen,
  completionRefusedScreen,
  earlierSignatureInvalid,
  isDscRefusal,
  lookingScreen,
  noBridgeScreen,
  noTokenScreen,
  refusalText,
  requestingScreen,
} from './dsc-screens.js';

/**
 * The DSC signing step. It keeps one heading (so focus on it stays there while the page talks to the bridge) and
 * draws its body for each state (dsc-screens.js); a state the signer asked for (Try again, Sign) moves focus to the
 * heading. `data-dsc` on the step names the state.
 */
export function dscSignStep(ctx, view) {
  const heading = ctx.heading(t('dsc.heading'));
  const body = h('div', { class: 'dsc-body' });
  const last = view.signer.dsc_transaction;
  const flow = {
    ctx,
    view,
    settings: bridgeSettings(),
    heading,
    body,
    step: h('div', { class: 'step', dataset: { step: 'sign', dsc: 'looking' } }, heading, body),
    /** The work of the state on screen (a poll of the bridge): aborted when the state or the step goes. */
    run: new AbortController(),
    /** The certificate chosen last, chosen again when the list comes back (Try again). */
    chosenId: null,
    /** A transaction of an earlier visit whose signature did not verify: said once, over the certificates. */
    earlierNotice: last?.status === 'failed' && last.error_code === 'dsc_signature_invalid' ? earlierSignatureInvalid() : null,
    /** The signer's attempts left as last seen, to tell a refusal that cost one from one that did not. */
    knownAttempts: Number.isInteger(view.signer.attempts_left) ? view.signer.attempts_left : null,
  };
  ctx.onLeave(() => flow.run.abort());
  // Once the step is in the document: its heading may have been focused, which the first state keeps.
  setTimeout(() => {
    if (flow.step.isConnected && !flow.run.signal.aborted) find(flow);
  }, 0);
  return flow.step;
}

function show(flow, screen, { focus = false } = {}) {
  flow.step.dataset.dsc = screen.state;
  flow.heading.textContent = screen.title;
  flow.body.replaceChildren(...screen.children.filter(Boolean));
  if (focus) focusHeading(flow.heading);
  if (screen.message) announce(screen.message, { assertive: Boolean(screen.assertive && focus) });
}

/** Ends the work of the state on screen; answers the signal of the next. */
function newRun(flow) {
  flow.run.abort();
  flow.run = new AbortController();
  return flow.run.signal;
}

const retryButton = (flow) =>
  h(
    'button',
    { type: 'button', class: 'button button--primary', on: { click: () => find(flow, { focus: true }) } },
    t('dsc.try_again'),
  );

/** Looks for the bridge and its certificates, and shows what it found. */
async function find(flow, { focus = false } = {}) {
  const signal = newRun(flow);
  show(flow, lookingScreen(), { focus });
  let found;
  try {
    // Not shown (the no-bridge screen is): the reason for whoever debugs it.
    if (!flow.settings.url) throw new BridgeError('unreachable', 'No DSC bridge address is configured.');
    found = await readBridge(flow.settings.url, signal);
  } catch {
    if (!signal.aborted) show(flow, noBridgeScreen(flow.settings, retryButton(flow)), { focus });
    return;
  }
  if (signal.aborted) return;
  const mine = signingCertificatesOf(found.certificates);
  if (mine.length === 0) show(flow, noTokenScreen(found.status, found.certificates, retryButton(flow)), { focus });
  else showCertificates(flow, mine, found.certificates, { focus });
}

/** The certificates, the consent and Sign. */
function showCertificates(flow, certificates, all, { focus }) {
  newRun(flow);
  const notice = flow.earlierNotice;
  flow.earlierNotice = null;
  // One document or several: the plural's `one` for one (or none listed), `other` for more.
  const documents = Math.max(1, documentsSignedBy(flow.view));
  const group = certificateChoice(certificates, flow.chosenId);
  const consent = consentField(t('dsc.consent', { count: documents }));
  const submit = h('button', { type: 'submit', class: 'button button--primary' }, t('dsc.sign'));
  const error = actionError();
  const form = h('form', { class: 'stack', novalidate: true }, group.wrapper, consent.wrapper, submit, error.el);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    if (!group.check()) return;
    const chosen = group.chosen();
    flow.chosenId = chosen.id;
    if (!requireConsent(consent)) return;
    busy(submit, t('dsc.checking'), () => start(flow, chosen, all, { consent, submit, error }));
  });
  const again = h(
    'button',
    { type: 'button', class: 'button button--secondary', on: { click: () => find(flow, { focus: true }) } },
    t('dsc.look_again'),
  );
  const count = certificates.length;
  show(
    flow,
    {
      state: 'choose',
      title: t('dsc.heading'),
      children: [
        notice ? h('p', { class: 'action-error dsc-outcome' }, notice) : null,
        h('p', {}, t('dsc.intro', { count: documents })),
        form,
        h('div', { class: 'actions' }, again),
      ],
      message: notice ?? t('dsc.found', { count }),
      assertive: Boolean(notice),
    },
    { focus },
  );
}

const documentsSignedBy = (view) =>
  Array.isArray(view.session.documents) ? view.session.documents.filter((document) => document.signed_by_you).length : 1;

/** /dsc/start with the chosen certificate: the service checks it and answers the digests to sign. */
async function start(flow, chosen, all, { consent, submit, error }) {
  let started;
  try {
    started = await postJson('/dsc/start', { consent: true, certificate: chosen.certificate, chain: chainFor(chosen, all) });
  } catch (failure) {
    if (failure instanceof ApiError && failure.problemFor('consent')) report(failure, consent, consent.input);
    else if (isDscRefusal(failure)) await showRefusal(flow, failure, { submit, error });
    else if (!flow.ctx.failed(failure)) report(failure, error, submit);
    return;
  }
  const documents = Array.isArray(started?.documents) ? started.documents : [];
  if (!started?.txn || documents.length === 0) {
    report(new ApiError(500, 'internal_error'), error, submit);
    return;
  }
  approveAll(flow, chosen, started.txn, documents);
}

/** The service refused the certificate: why, and the attempts left when it cost one; the last one fails the signer. */
async function showRefusal(flow, failure, { submit, error }) {
  const left = await attemptsAfterRefusal(flow, failure);
  const message = refusalText(failure, left);
  if (left === 0) {
    flow.ctx.refresh(message);
    return;
  }
  error.show(message);
  announce(message, { assertive: true });
  submit.focus();
}

/**
 * The attempts left after a refusal of the certificate when it cost one (0: the signer has failed), else null, as
 * the signer's view says.
 */
async function attemptsAfterRefusal(flow, failure) {
  let now;
  try {
    now = await getJson('/session');
  } catch {
    return null;
  }
  if (now?.signer?.status === 'failed') return 0;
  const left = Number.isInteger(now?.signer?.attempts_left) ? now.signer.attempts_left : null;
  const counted = left !== null && flow.knownAttempts !== null && left < flow.knownAttempts;
  if (left !== null) flow.knownAttempts = left;
  return counted ? left : null;
}

/** For each document: a sign request in the bridge, approved by the signer there; then /dsc/complete. */
async function approveAll(flow, chosen, txn, documents) {
  const signal = newRun(flow);
  const signatures = [];
  for (const [index, document] of documents.entries()) {
    const signature = await approveOne(flow, chosen, document, { index, count: documents.length, signal });
    if (signal.aborted || !signature) return;
    signatures.push({ position: document.position, signature });
    if (index + 1 < documents.length) announce(t('dsc.document_signed', { number: index + 1, total: documents.length }));
  }
  await complete(flow, txn, signatures, signal);
}

/** One document: the request made in the bridge, the link to approve it, the wait. The signature, or null. */
async function approveOne(flow, chosen, document, { index, count, signal }) {
  const which = { name: document.name, number: index + 1, total: count };
  const first = index === 0;
  show(flow, requestingScreen(which), { focus: first });
  let answer;
  try {
    const { requestId, approveUrl } = await requestSignature(flow.settings.url, chosen, document, signal);
    if (signal.aborted) return null;
    const stop = h(
      'button',
      { type: 'button', class: 'button button--secondary', on: { click: () => find(flow, { focus: true }) } },
      t('dsc.stop'),
    );
    show(flow, approveScreen({ document: which, approveUrl, requestId, stop }));
    // The next document's link replaces the last one, which had focus: the new one takes it.
    if (!first) flow.body.querySelector('.dsc-approve-link')?.focus();
    answer = await waitForApproval(flow.settings.url, requestId, signal);
  } catch (error) {
    if (!signal.aborted) show(flow, bridgeProblemScreen(error, retryButton(flow)), { focus: true });
    return null;
  }
  if (signal.aborted) return null;
  if (answer.status === 'signed' && typeof answer.signature === 'string') return answer.signature;
  show(flow, bridgeRefusalScreen(answer, retryButton(flow)), { focus: true });
  return null;
}

/** Every signature back to the service, which adds them to the documents; then the page's signed screen. */
async function complete(flow, txn, signatures, signal) {
  show(flow, completingScreen(), { focus: true });
  let signed;
  try {
    signed = await postJson('/dsc/complete', { txn, signatures });
  } catch (failure) {
    // A lapsed or replaced transaction (409) reads the session again, with the service's reason.
    if (signal.aborted || flow.ctx.failed(failure)) return;
    const text = isDscRefusal(failure) ? refusalText(failure) : describeError(failure);
    show(flow, completionRefusedScreen(text, retryButton(flow)), { focus: true });
    return;
  }
  if (!signal.aborted) flow.ctx.signed(signed);
}
