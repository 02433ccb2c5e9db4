// What the steps share: how an API error is shown next to the control it concerns, and the consent box that
// both kinds of signature require before anything is sent.

import { describeError } from '../api.js';
import { actionError, announce, clearFieldError, field, h, showFieldError } from '../dom.js';
import { t } from '../i18n.js';

/** Shows an API error next to `target` (a field or an action slot), announces it, and focuses the control. */
export function report(error, target, focusEl, { except = [] } = {}) {
  const message = describeError(error, { except });
  if (target.input) showFieldError(target, message);
  else target.show(message);
  announce(message, { assertive: true });
  focusEl?.focus();
  return message;
}

export function consentField(label) {
  return field({ label, name: 'consent', control: 'checkbox' });
}

export function requireConsent(consent) {
  clearFieldError(consent);
  if (consent.input.checked) return true;
  showFieldError(consent, t('feedback.consent_required'));
  announce(t('feedback.consent_required'), { assertive: true });
  consent.input.focus();
  return false;
}

/**
 * The consent box, the button and the action's error slot in one form: a submit without consent is refused in
 * place; with it, `onConsented(error)` runs (`error` is the form's slot for what the request answers).
 */
export function consentForm(consent, submit, onConsented) {
  const error = actionError();
  const form = h('form', { class: 'stack', novalidate: true }, consent.wrapper, submit, error.el);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    if (!requireConsent(consent)) return;
    onConsented(error);
  });
  return form;
}
