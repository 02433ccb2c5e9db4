// The email and mobile one-time-code checks: send a code, then verify the one the signer types.

import { postJson } from '../api.js';
import { actionError, announce, busy, clearFieldError, field, formatTime, h, showFieldError } from '../dom.js';
import { report } from './feedback.js';

export function otpCheckStep(ctx, check) {
  const channel = check.kind;
  const noun = channel === 'email' ? 'email address' : 'mobile number';
  const heading = ctx.heading(channel === 'email' ? 'Verify your email address' : 'Verify your mobile number');
  const intro = h(
    'p',
    {},
    check.sent_to ? `We will send a 6-digit code to ${check.sent_to}.` : `We will send a 6-digit code to your ${noun}.`,
  );
  const code = field({
    label: 'Verification code',
    hint: channel === 'email' ? 'The code in the email we sent you.' : 'The code in the text message we sent you.',
    name: 'otp-code',
    attrs: { inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: '10', spellcheck: 'false' },
  });
  const verify = h('button', { type: 'submit', class: 'button button--primary' }, 'Verify code');
  const form = h('form', { class: 'stack', novalidate: true, hidden: true }, code.wrapper, verify);
  const send = h('button', { type: 'button', class: 'button button--primary' }, 'Send code');
  const sendError = actionError();
  const wait = h('p', { class: 'hint', hidden: true });

  send.addEventListener('click', () =>
    busy(send, 'Sending…', async () => {
      sendError.clear();
      try {
        const sent = await postJson('/otp/send', { channel });
        const told = `We sent a code to ${sent.sent_to ?? `your ${noun}`}.${sent.expires_at ? ` It is valid until ${formatTime(sent.expires_at)}.` : ''}`;
        intro.textContent = told;
        form.hidden = false;
        send.textContent = 'Send a new code';
        send.classList.replace('button--primary', 'button--secondary');
        if (sent.resend_after) {
          wait.textContent = `You can ask for a new code after ${formatTime(sent.resend_after)}.`;
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
      showFieldError(code, 'Enter the code we sent you (digits only).');
      announce('Enter the code we sent you (digits only).', { assertive: true });
      code.input.focus();
      return;
    }
    busy(verify, 'Checking…', async () => {
      try {
        await postJson('/otp/verify', { channel, code: value });
        announce(channel === 'email' ? 'Email address verified.' : 'Mobile number verified.');
        await ctx.refresh();
      } catch (error) {
        if (!ctx.failed(error)) report(error, code, code.input);
      }
    });
  });

  return h('div', { class: 'step', dataset: { step: channel } }, heading, intro, form, send, wait, sendError.el);
}
