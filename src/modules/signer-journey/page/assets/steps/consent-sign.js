// The signature of the suresign and pfx kinds: consent, then one request.

import { ApiError, postJson } from '../api.js';
import { busy, h } from '../dom.js';
import { t } from '../i18n.js';
import { consentField, consentForm, report } from './feedback.js';

/** suresign and pfx: consent, then one request. */
export function consentSignStep(ctx, view) {
  const heading = ctx.heading(t('consent.heading'));
  const how = view.signer.sign_type === 'pfx' ? t('consent.how_pfx') : t('consent.how_suresign');
  const consent = consentField(t('consent.label'));
  const submit = h('button', { type: 'submit', class: 'button button--primary' }, t('consent.submit'));
  const form = consentForm(consent, submit, (error) =>
    busy(submit, t('consent.signing'), async () => {
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
