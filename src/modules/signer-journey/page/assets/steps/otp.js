// The email and mobile one-time-code checks: send a code, then verify the one the signer types.

import { postJson } from '../api.js';
import { actionError, announce, busy, clearFieldError, field, formatTime, h, showFieldError } from '../dom.js';
import { t } from '../i18n.js';
import { report } from './feedback.js';

export function otpCheckStep(ctx, check) {
  const channel = check.kind;
  const heading = ctx.heading(t('otp.heading', { channel }));
  const intro = h('p', {}, check.sent_to ? t('otp.will_send_to', { recipient: check.sent_to }) : t('otp.will_send', { channel }));
  const code = field({
    label: t('otp.code_label'),
    hint: t('otp.code_hint', { channel }),
    name: 'otp-code',
    attrs: { inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: '10', spellcheck: 'false' },
  });
  const verify = h('button', { type: 'submit', class: 'button button--primary' }, t('otp.verify'));
  const form = h('form', { class: 'stack', novalidate: true, hidden: true }, code.wrapper, verify);
  const send = h('button', { type: 'button', class: 'button button--primary' }, t('otp.send'));
  const sendError = actionError();
  const wait = h('p', { class: 'hint', hidden: true });

  send.addEventListener('click', () =>
    busy(send, t('otp.sending'), async () => {
      sendError.clear();
      try {
        const sent = await postJson('/otp/send', { channel });
        const told = [
          sent.sent_to ? t('otp.sent_to', { recipient: sent.sent_to }) : t('otp.sent', { channel }),
          sent.expires_at ? t('otp.valid_until', { time: formatTime(sent.expires_at) }) : '',
        ]
          .filter(Boolean)
          .join(' ');
        intro.textContent = told;
        form.hidden = false;
        send.textContent = t('otp.send_new');
        send.classList.replace('button--primary', 'button--secondary');
        if (sent.resend_after) {
          wait.textContent = t('otp.resend_after', { time: formatTime(sent.resend_after) });
          wait.hidden = false;
        }
        announce(told);
        code.input.focus();
      } catch (error) {
        if (!ctx.failed(error)) report(error, sendError, send);
      }
    }),
  );

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearFieldError(code);
    const value = code.input.value.replace(/\s+/g, '');
    if (!/^\d{4,10}$/.test(value)) {
      showFieldError(code, t('otp.digits_only'));
      announce(t('otp.digits_only'), { assertive: true });
      code.input.focus();
      return;
    }
    busy(verify, t('otp.checking'), async () => {
      try {
        await postJson('/otp/verify', { channel, code: value });
        announce(t('otp.verified', { channel }));
        await ctx.refresh();
      } catch (error) {
        if (!ctx.failed(error)) report(error, code, code.input);
      }
    });
  });

  return h('div', { class: 'step', dataset: { step: channel } }, heading, intro, form, send, wait, sendError.el);
}
