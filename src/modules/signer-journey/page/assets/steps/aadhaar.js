// Aadhaar eSign through the eSign Service Provider: consent, the hand-over form to the ESP, and the wait for
// its answer after the signer comes back.

import { ApiError, getJson, postJson, sentence } from '../api.js';
import { announce, busy, field, formatTime, h } from '../dom.js';
import { consentForm, report } from './feedback.js';
import { embedded } from '../embedded.js';
import { t } from '../i18n.js';

/** Where /sign/return finds this page again after the ESP: this tab's sessionStorage (the token stays out of URLs). */
export const RETURN_PATH_KEY = 'esign.signerPath';
const ESP_POLL_MS = 2000;

/** Attempts left before the signer fails, when the view says (`attempts_left`, or `max_retry` and `failed_attempts`). */
function attemptsLeftOf(signer) {
  if (Number.isInteger(signer.attempts_left)) return Math.max(0, signer.attempts_left);
  const max = signer.max_retry;
  const used = signer.failed_attempts;
  return Number.isInteger(max) && Number.isInteger(used) ? Math.max(0, max - used) : null;
}

const attemptsText = (left) => (left === null ? '' : t('aadhaar.attempts_left', { count: left }));

/** What the polling compares: a change of any of these shows the page anew. */
const espStateOf = (view) =>
  [view.session.status, view.signer.status, view.signer.esp_transaction?.txn, view.signer.esp_transaction?.status].join('|');

/**
 * Aadhaar eSign through the eSign Service Provider (ESP), the CCA way: the signer consents here, the page posts
 * the signed request to the ESP in this tab, the signer authenticates on the ESP's own pages (Aadhaar number, then
 * OTP or fingerprint), and the ESP sends them back to /sign/return, which brings them here. The step follows the
 * signer's latest ESP transaction (`signer.esp_transaction`): none, failed or expired -> consent and go (again);
 * held (a batch of a signer with more than five documents signed) -> consent and go for the next batch; pending (or
 * completed while the signature is being recorded) -> wait, reading the session every 2 s.
 */
export function aadhaarSignStep(ctx, view) {
  const transaction = view.signer.esp_transaction ?? null;
  if (transaction?.status === 'pending' || transaction?.status === 'completed') return espWaitingStep(ctx, view, transaction);
  return embedded ? espInWindowStep(ctx, view, transaction) : espStartStep(ctx, view, transaction);
}

/**
 * Embedded in another site (embedded.js): eSign Service Providers refuse to be framed, and the hand-over is a
 * top-level form POST, so the signer goes through Aadhaar eSign in a window of its own (this page, top-level, which
 * hands over and comes back as it always does). The frame waits, reading the session every 2 s, and shows the
 * outcome (and tells the host) as soon as the service has it. Nothing crosses between the two windows but the
 * service's state: a third-party frame's storage is partitioned from the window's.
 */
function espInWindowStep(ctx, view, transaction) {
  const { heading, outcome } = espOutcomeOf(ctx, view, transaction);
  const open = h('button', { type: 'button', class: 'button button--primary' }, t('aadhaar.window_open'));
  const note = h('p', { class: 'hint', role: 'status' });
  open.addEventListener('click', () => {
    const opened = window.open(location.pathname, '_blank');
    note.textContent = opened ? t('aadhaar.window_opened') : t('aadhaar.window_blocked');
  });
  refreshOnEspChange(ctx, view);
  return h(
    'div',
    { class: 'step', dataset: { step: 'sign', esp: 'window' } },
    heading,
    outcome,
    h('p', {}, t('aadhaar.window_intro')),
    batchesNote(view),
    open,
    note,
  );
}

/**
 * What the start step says about the signer's last transaction: its heading, and for a cancelled, failed or expired
 * one the outcome (announced).
 */
function espOutcomeOf(ctx, view, transaction) {
  const status = transaction?.status ?? null;
  const again = status === 'failed' || status === 'expired';
  if (status === 'held') return heldOutcomeOf(ctx, view, transaction);
  // The signer's own Cancel at the ESP: not a failure, and it cost no attempt.
  const cancelled = status === 'failed' && transaction.cancelled_by_signer === true;
  const heading = ctx.heading(
    cancelled
      ? t('aadhaar.heading_cancelled')
      : status === 'failed'
        ? t('aadhaar.heading_failed')
        : status === 'expired'
          ? t('aadhaar.heading_expired')
          : t('aadhaar.heading'),
  );
  let outcome = null;
  if (cancelled) {
    const text = t('aadhaar.cancelled');
    outcome = h('p', { class: 'notice esp-outcome', dataset: { espStatus: 'cancelled' } }, text);
    announce(text);
  } else if (again) {
    const why = status === 'failed' ? sentence(transaction.error_message ?? '') || t('aadhaar.failed') : t('aadhaar.expired');
    // Whole sentences, each its own message: the ESP's reason (its own words, when it gave one), the attempts left.
    const text = [why, attemptsText(attemptsLeftOf(view.signer)), t('aadhaar.can_try_again')].filter(Boolean).join(' ');
    outcome = h('p', { class: 'action-error esp-outcome', dataset: { espStatus: status } }, text);
    announce(text, { assertive: true });
  }
  return { status, again, cancelled, heading, outcome };
}

/** A batch signed and held: the next one is to be authenticated; nothing is added to the documents until the last. */
function heldOutcomeOf(ctx, view, transaction) {
  const batch = transaction.batch ?? { number: 1, of: view.signer.esp_batches ?? 2 };
  const heading = ctx.heading(t('aadhaar.heading_held', { next: batch.number + 1, total: batch.of }));
  const text = t('aadhaar.held', { number: batch.number, total: batch.of });
  const outcome = h('p', { class: 'notice esp-outcome', dataset: { espStatus: 'held' } }, text);
  announce(text);
  return { status: 'held', again: false, cancelled: false, heading, outcome };
}

/** For a signer with more documents than one ESP transaction signs: how many authentications it takes. */
function batchesNote(view) {
  const batches = view.signer.esp_batches;
  if (!Number.isInteger(batches) || batches < 2) return null;
  const count = (view.session.documents ?? []).filter((document) => document.signed_by_you).length;
  return h(
    'p',
    { class: 'hint esp-batches', dataset: { espBatches: String(batches) } },
    t('aadhaar.batches', { count, batches }),
  );
}

/**
 * Consent and go. `restart`: the signer left an open transaction at the ESP and starts over; /esp/start then
 * abandons that one (at no cost) instead of refusing.
 */
function espStartStep(ctx, view, transaction, { restart = false, espUnreachable = false } = {}) {
  const { status, again, cancelled, heading, outcome } = espOutcomeOf(ctx, view, transaction);
  const intro = h('p', {}, t('aadhaar.intro'));
  // The consent the eSign API requires before the ESP authenticates the signer: its words are reviewed text.
  const consent = field({
    label: t('aadhaar.consent'),
    hint: t('aadhaar.consent_hint'),
    name: 'consent',
    control: 'checkbox',
  });
  const submit = h(
    'button',
    { type: 'submit', class: 'button button--primary' },
    cancelled
      ? t('aadhaar.start_again')
      : again
        ? t('aadhaar.try_again')
        : status === 'held'
          ? t('aadhaar.continue_next_batch')
          : t('aadhaar.continue'),
  );
  const form = consentForm(consent, submit, (error) =>
    busy(submit, t('aadhaar.opening'), () => startAtEsp(ctx, { consent, submit, error, restart, espUnreachable })),
  );
  return h(
    'div',
    { class: 'step', dataset: { step: 'sign', esp: status ?? 'none' } },
    heading,
    outcome,
    intro,
    batchesNote(view),
    form,
  );
}

/** Asks /esp/start for the signed request and hands the signer over to the ESP with it. */
async function startAtEsp(ctx, { consent, submit, error, restart, espUnreachable }) {
  let started;
  try {
    // esp_unreachable: the provider's pages did not open; the session's next provider, when it names one, is used.
    const body = restart
      ? { consent: true, restart: true, ...(espUnreachable ? { esp_unreachable: true } : {}) }
      : { consent: true };
    started = await postJson('/esp/start', body);
  } catch (failure) {
    if (failure instanceof ApiError && failure.problemFor('consent')) {
      report(failure, consent, consent.input);
      return;
    }
    // An earlier transaction of this signer is still open (started from another tab, or left at the ESP with the
    // browser's Back button): the waiting step shows it, and says when a new one may start.
    if (failure instanceof ApiError && failure.status === 409 && (await hasOpenTransaction())) {
      await ctx.refresh();
      return;
    }
    // A 3.2 ESP that did not take the request: the message says why; `esp` repeats it with the ESP's code.
    if (!ctx.failed(failure)) report(failure, error, submit, { except: ['esp'] });
    return;
  }
  const target = espTargetOf(started);
  if (!target) {
    report(new ApiError(502, t('aadhaar.unreachable')), error, submit);
    return;
  }
  try {
    sessionStorage.setItem(RETURN_PATH_KEY, location.pathname);
  } catch {
    // No storage (a privacy mode): the return page then asks to open the signing link again.
  }
  ctx.replaceStep(espHandoffStep(ctx, target, passedOverNote(started)));
}

/** The providers passed over on the way (ESP failover): said before the hand-over, so the signer knows why. */
function passedOverNote(started) {
  const passed = Array.isArray(started?.failover) ? started.failover.filter((entry) => typeof entry?.backend === 'string') : [];
  if (!passed.length || typeof started.backend !== 'string') return null;
  const names = passed.map((entry) => entry.backend.toUpperCase()).join(', ');
  return h(
    'p',
    { class: 'notice esp-failover', dataset: { espBackend: started.backend } },
    t('aadhaar.failover', { count: passed.length, names, backend: started.backend.toUpperCase() }),
  );
}

async function hasOpenTransaction() {
  try {
    return (await getJson('/session')).signer?.esp_transaction?.status === 'pending';
  } catch {
    return false;
  }
}

/** The ESP's address and the form's fields from /esp/start, or null when they are not usable. */
function espTargetOf(started) {
  let url;
  try {
    url = new URL(started?.esp_url, location.href);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const fields = started?.fields && typeof started.fields === 'object' ? Object.entries(started.fields) : [];
  if (!fields.length || !fields.every(([, value]) => typeof value === 'string')) return null;
  return { action: url.href, fields };
}

/**
 * The hand-over: a form with exactly the fields /esp/start gave, POSTed to the ESP in this tab as soon as it is
 * on the page; its button is there for when the automatic submission does not happen.
 */
function espHandoffStep(ctx, target, note = null) {
  const heading = ctx.heading(t('aadhaar.opening'));
  const form = h(
    'form',
    {
      method: 'post',
      action: target.action,
      enctype: 'application/x-www-form-urlencoded',
      class: 'stack',
      dataset: { esp: 'handoff' },
    },
    target.fields.map(([name, value]) => h('input', { type: 'hidden', name, value })),
    h('p', {}, t('aadhaar.handoff')),
    h('button', { type: 'submit', class: 'button button--primary' }, t('aadhaar.handoff_continue')),
  );
  announce(t('aadhaar.handoff_announce'));
  // After the step is in the document (replaceStep appends it once this returns).
  setTimeout(() => {
    // The prototype's submit: a field named `submit` could not shadow it.
    if (form.isConnected) HTMLFormElement.prototype.submit.call(form);
  }, 0);
  return h('div', { class: 'step', dataset: { step: 'sign', esp: 'handoff' } }, heading, note, form);
}

function espWaitingStep(ctx, view, transaction) {
  const pending = transaction.status === 'pending';
  const heading = ctx.heading(t('aadhaar.waiting_heading'));
  const text = pending ? t('aadhaar.waiting_pending') : t('aadhaar.waiting_completed');
  let later = null;
  if (pending) {
    // The signer may have left the ESP's pages (the browser's Back button, a closed tab): they need not wait for the
    // transaction to time out.
    const closes = transaction.expires_at ? formatTime(transaction.expires_at) : '';
    const restart = h('button', { type: 'button', class: 'button button--secondary' }, t('aadhaar.start_again'));
    restart.addEventListener('click', () =>
      ctx.replaceStep(embedded ? espInWindowStep(ctx, view, null) : espStartStep(ctx, view, null, { restart: true })),
    );
    // The provider's pages never loaded (its site down): start again with the session's next provider, if any.
    const elsewhere = h('button', { type: 'button', class: 'button button--secondary' }, t('aadhaar.provider_did_not_open'));
    elsewhere.addEventListener('click', () =>
      ctx.replaceStep(espStartStep(ctx, view, null, { restart: true, espUnreachable: true })),
    );
    later = h(
      'div',
      { class: 'esp-restart' },
      h('p', { class: 'hint' }, closes ? t('aadhaar.restart_hint_until', { time: closes }) : t('aadhaar.restart_hint')),
      restart,
      embedded ? null : elsewhere,
    );
  }
  announce(pending ? t('aadhaar.waiting_announce') : text);

  refreshOnEspChange(ctx, view);
  return h(
    'div',
    { class: 'step', dataset: { step: 'sign', esp: transaction.status } },
    heading,
    h('p', { class: 'waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text),
    later,
  );
}

/**
 * Reads the session every 2 s while the step is on screen, and shows the page anew once the ESP part of it moves (a
 * transaction opened, answered, failed; the signer or the session done).
 */
function refreshOnEspChange(ctx, view) {
  const seen = espStateOf(view);
  let stopped = false;
  let timer = null;
  const poll = async () => {
    if (stopped) return;
    let next;
    try {
      next = await getJson('/session');
    } catch (failure) {
      if (stopped || ctx.failed(failure)) return;
      // A network hiccup or a busy server: keep waiting, a little slower.
      timer = setTimeout(poll, ESP_POLL_MS * 2);
      return;
    }
    if (stopped) return;
    if (espStateOf(next) !== seen) {
      stopped = true;
      await ctx.refresh();
      return;
    }
    timer = setTimeout(poll, ESP_POLL_MS);
  };
  timer = setTimeout(poll, ESP_POLL_MS);
  ctx.onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
}
