// Declining to sign: the disclosure under every step.

import { ApiError, postJson } from '../api.js';
import { actionError, announce, busy, clearFieldError, field, h, showFieldError } from '../dom.js';
import { report } from './feedback.js';

/**
 * "Decline to sign": a disclosure under every step. The reason is required (at most 500 characters) and goes to the
 * sender; declining ends the request for everyone, so the form says so before it is sent.
 */
export function declineSection(onDeclined) {
  const toggle = h('button', { type: 'button', class: 'button button--secondary', 'aria-expanded': 'false' }, 'Decline to sign');
  const reason = field({
    label: 'Why do you decline?',
    hint: 'The sender reads this. At most 500 characters.',
    name: 'decline-reason',
    attrs: { maxlength: '500', autocomplete: 'off' },
  });
  const submit = h('button', { type: 'submit', class: 'button button--danger' }, 'Decline and end this request');
  const error = actionError();
  const form = h(
    'form',
    { class: 'stack decline-form', novalidate: true, hidden: true },
    h('p', {}, 'Declining ends the signing request for everyone. Nobody can sign this document afterwards.'),
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
      showFieldError(reason, 'Say why you decline to sign.');
      announce('Say why you decline to sign.', { assertive: true });
      reason.input.focus();
      return;
    }
    busy(submit, 'Declining…', async () => {
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
