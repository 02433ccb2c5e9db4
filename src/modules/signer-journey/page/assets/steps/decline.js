// Declining to sign: the disclosure under every step.

import { ApiError, postJson } from '../api.js';
import { actionError, announce, busy, clearFieldError, field, h, showFieldError } from '../dom.js';
import { t } from '../i18n.js';
import { report } from './feedback.js';

/** The longest reason the service takes (decline.ts). */
const REASON_MAX = 500;

/**
 * "Decline to sign": a disclosure under every step. The reason is required (at most 500 characters) and goes to the
 * sender; declining ends the request for everyone, so the form says so before it is sent.
 */
export function declineSection(onDeclined) {
  const toggle = h(
    'button',
    { type: 'button', class: 'button button--secondary', 'aria-expanded': 'false' },
    t('decline.toggle'),
  );
  const reason = field({
    label: t('decline.reason_label'),
    hint: t('decline.reason_hint', { max: REASON_MAX }),
    name: 'decline-reason',
    attrs: { maxlength: String(REASON_MAX), autocomplete: 'off' },
  });
  const submit = h('button', { type: 'submit', class: 'button button--danger' }, t('decline.submit'));
  const error = actionError();
  const form = h(
    'form',
    { class: 'stack decline-form', novalidate: true, hidden: true },
    h('p', {}, t('decline.warning')),
    reason.wrapper,
    submit,
    error.el,
  );
  toggle.addEventListener('click', () => {
    const open = form.hidden;
    form.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
    if (open) reason.input.focus();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldError(reason);
    const text = reason.input.value.trim();
    if (!text) {
      showFieldError(reason, t('decline.reason_required'));
      announce(t('decline.reason_required'), { assertive: true });
      reason.input.focus();
      return;
    }
    busy(submit, t('decline.declining'), async () => {
      try {
        onDeclined(await postJson('/decline', { reason: text }));
      } catch (failure) {
        if (failure instanceof ApiError && failure.problemFor('reason')) report(failure, reason, reason.input);
        else report(failure, error, submit);
      }
    });
  });
  return h('section', { class: 'decline', dataset: { section: 'decline' } }, toggle, form);
}
