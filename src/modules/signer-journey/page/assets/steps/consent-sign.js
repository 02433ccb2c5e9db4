// The signature of the suresign and pfx kinds: consent, then one request.

import { ApiError, postJson } from '../api.js';
import { busy, h } from '../dom.js';
import { consentField, consentForm, report } from './feedback.js';

/** suresign and pfx: consent, then one request. */
export function consentSignStep(ctx, view) {
  const heading = ctx.heading('Sign the document');
  const how =
    view.signer.sign_type === 'pfx'
      ? 'The document is signed with the sender’s digital signing certificate on your behalf; your consent and the time are recorded in the signature.'
      : 'Your electronic signature is applied with a document-signing certificate; your name and the time are recorded in the signature.';
  const consent = consentField('I have read the document and I agree to sign it electronically.');
  const submit = h('button', { type: 'submit', class: 'button button--primary' }, 'Sign the document');
  const form = consentForm(consent, submit, (error) =>
    busy(submit, 'Signing…', async () => {
      try {
        ctx.signed(await postJson('/sign', { consent: true }));
      } catch (failure) {
        if (ctx.failed(failure)) return;
        if (failure instanceof ApiError && failure.problemFor('consent')) report(failure, consent, consent.input);
        else report(failure, error, submit);
      }
    }),
  );
  return h('div', { class: 'step', dataset: { step: 'sign' } }, heading, h('p', {}, how), form);
}
