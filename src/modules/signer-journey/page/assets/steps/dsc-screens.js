// What the DSC step shows in each of its states (steps/dsc.js draws them): each builder answers the state's name,
// its heading, its content and what the live region says. Problems say what happened and what to do.

import { describeError, sentence } from '../api.js';
import { announce, formatDateTime, h } from '../dom.js';
import { t, tParts } from '../i18n.js';
import { holderOf, issuerOf } from './dsc-bridge.js';

/**
 * Why the service refused the certificate, in the signer's words (a function: the message is looked up when it is
 * said, once the catalog is loaded); the service's own problem text follows.
 */
const REFUSALS = {
  dsc_untrusted: () => t('dsc.refused.untrusted'),
  dsc_expired: () => t('dsc.refused.expired'),
  dsc_no_non_repudiation: () => t('dsc.refused.no_non_repudiation'),
  dsc_revoked: () => t('dsc.refused.revoked'),
  dsc_name_mismatch: () => t('dsc.refused.name_mismatch'),
  dsc_not_pinned: () => t('dsc.refused.not_pinned'),
  dsc_certificate_invalid: () => t('dsc.refused.certificate_invalid'),
  dsc_revocation_unavailable: () => t('dsc.refused.revocation_unavailable'),
  dsc_signature_invalid: () => t('dsc.refused.signature_invalid'),
};

/** A refusal of an earlier visit's transaction, said over the certificates when the signer comes back. */
export const earlierSignatureInvalid = () => REFUSALS.dsc_signature_invalid();

/** Why the bridge did not sign, and what to do about it: the bridge's code -> its title and text. */
const BRIDGE_REFUSALS = {
  cancelled: {
    title: () => t('dsc.bridge_refused.cancelled_title'),
    text: () => t('dsc.bridge_refused.cancelled'),
  },
  token_removed: {
    title: () => t('dsc.bridge_refused.token_removed_title'),
    text: () => t('dsc.bridge_refused.token_removed'),
  },
  pin_locked: {
    title: () => t('dsc.bridge_refused.pin_locked_title'),
    text: () => t('dsc.bridge_refused.pin_locked'),
  },
  key_not_found: {
    title: () => t('dsc.bridge_refused.key_not_found_title'),
    text: () => t('dsc.bridge_refused.key_not_found'),
  },
  expired: {
    title: () => t('dsc.bridge_refused.expired_title'),
    text: () => t('dsc.bridge_refused.expired'),
  },
};

/** The bridge's refusals of the request itself: its code -> the message. */
const BRIDGE_PROBLEMS = {
  certificate_not_found: () => t('dsc.bridge_problem.certificate_not_found'),
  request_not_found: () => t('dsc.bridge_problem.request_not_found'),
  too_many_requests: () => t('dsc.bridge_problem.too_many_requests'),
  unreachable: () => t('dsc.bridge_problem.unreachable'),
};

const attemptsText = (left) => (Number.isInteger(left) ? t('dsc.attempts_left', { count: left }) : '');

/** The service's refusal of a certificate (or of a signature) in the signer's words, its problem, the attempts left. */
export function refusalText(failure, attemptsLeft = null) {
  // The attempts left are said once, in the page's words: the problem's own count is left out.
  const problem = (failure.problemFor('certificate') ?? failure.problemFor('signatures'))?.replace(
    / \(\d+ attempt\(s\) left\)$/,
    '',
  );
  // Whole sentences, each its own message (the problem in the service's words).
  const reason = Object.hasOwn(REFUSALS, failure.code ?? '') ? REFUSALS[failure.code]() : describeError(failure);
  return [reason, problem ? sentence(problem) : '', attemptsText(attemptsLeft)].filter(Boolean).join(' ');
}

export const isDscRefusal = (failure) => Object.hasOwn(REFUSALS, failure?.code ?? '');

const waitingLine = (text) => h('p', { class: 'waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
const problemLine = (text, dataset) => h('p', { class: 'action-error dsc-outcome', dataset }, text);
const actions = (...buttons) => h('div', { class: 'actions' }, ...buttons);

/** A link that opens in a new tab, and says so to screen readers. */
const newTabLink = (href, text, props = {}) =>
  h(
    'a',
    { href, target: '_blank', rel: 'noopener', ...props },
    text,
    h('span', { class: 'visually-hidden' }, ` ${t('dsc.opens_in_new_tab')}`),
  );

export const lookingScreen = () => ({
  state: 'looking',
  title: t('dsc.heading'),
  children: [waitingLine(t('dsc.looking'))],
  message: t('dsc.looking_announce'),
});

export function noBridgeScreen(settings, retry) {
  const steps = h(
    'ol',
    { class: 'dsc-howto' },
    h(
      'li',
      {},
      settings.download
        ? tParts('dsc.howto_download', {}, { link: (children) => h('a', { href: settings.download }, children) })
        : t('dsc.howto_get'),
    ),
    h('li', {}, t('dsc.howto_start')),
    h('li', {}, t('dsc.howto_try_again')),
  );
  return {
    state: 'no-bridge',
    title: t('dsc.no_bridge_title'),
    children: [
      problemLine(t('dsc.no_bridge')),
      h('p', {}, t('dsc.no_bridge_why')),
      steps,
      settings.help ? h('p', {}, newTabLink(settings.help, t('dsc.howto_help'))) : null,
      h('p', { class: 'hint' }, t('dsc.local_network')),
      h('p', { class: 'hint' }, t('dsc.other_origin', { origin: location.origin })),
      actions(retry),
    ],
    message: t('dsc.no_bridge_announce'),
    assertive: true,
  };
}

/** The bridge answers but lists no certificate of the signer's: what it does see, when that helps. */
export function noTokenScreen(status, certificates, retry) {
  const modules = Array.isArray(status?.modules) ? status.modules : [];
  const tokens = Array.isArray(status?.tokens) ? status.tokens : [];
  const unloaded = modules.filter((module) => module && module.loaded === false);
  const seen = tokens.map((token) => `“${token.label}”`).join(', ');
  // The driver's own words (the bridge's, in English), when it gave them.
  const error = unloaded[0]?.error ? sentence(unloaded[0].error).replace(/\.$/, '') : '';
  const paths = unloaded.map((m) => m.path).join(', ');
  return {
    state: 'no-token',
    title: t('dsc.no_token_title'),
    children: [
      problemLine(t('dsc.no_token')),
      unloaded.length
        ? h(
            'p',
            { class: 'hint' },
            error ? t('dsc.driver_not_loaded_because', { paths, error }) : t('dsc.driver_not_loaded', { paths }),
          )
        : null,
      tokens.length
        ? h(
            'p',
            { class: 'hint' },
            certificates.length ? t('dsc.tokens_ca_only', { tokens: seen }) : t('dsc.tokens_empty', { tokens: seen }),
          )
        : null,
      h('p', {}, t('dsc.then_try_again')),
      actions(retry),
    ],
    message: t('dsc.no_token_announce'),
    assertive: true,
  };
}

/**
 * The document asked for, `{ name, number, total }` (number: from 1), in a sentence of its own: one message for a
 * single document, another naming which of several it is.
 */
const requestingText = ({ name, number, total }) =>
  total > 1 ? t('dsc.requesting_of', { name, number, total }) : t('dsc.requesting', { name });
const approveText = ({ name, number, total }) =>
  total > 1 ? t('dsc.approve_of', { name, number, total }) : t('dsc.approve', { name });

export const requestingScreen = (document) => ({
  state: 'requesting',
  title: t('dsc.approve_title'),
  children: [waitingLine(requestingText(document))],
  message: t('dsc.requesting_announce'),
});

/** The request is in the bridge: the signer opens its page (a link: a window opened by script after a wait is blocked). */
export function approveScreen({ document, approveUrl, requestId, stop }) {
  return {
    state: 'approve',
    title:
      document.total > 1 ? t('dsc.approve_title_of', { number: document.number, total: document.total }) : t('dsc.approve_title'),
    children: [
      h('p', { class: 'notice dsc-instruction' }, h('strong', {}, t('dsc.enter_pin'))),
      h('p', {}, approveText(document)),
      actions(
        newTabLink(approveUrl, t('dsc.open_bridge'), {
          class: 'button button--primary dsc-approve-link',
          dataset: { request: requestId },
        }),
      ),
      waitingLine(t('dsc.waiting_approval')),
      actions(stop),
    ],
    message: t('dsc.approve_announce'),
  };
}

/** The bridge's answer when it did not sign: cancelled, token removed, PIN locked, no key, timed out. */
export function bridgeRefusalScreen(answer, retry) {
  const code = answer.status === 'expired' ? 'expired' : (answer.error?.code ?? '');
  const known = Object.hasOwn(BRIDGE_REFUSALS, code) ? BRIDGE_REFUSALS[code] : null;
  // Unknown: the bridge's own words (English), else the page's; then a sentence of the page's.
  const text = known
    ? known.text()
    : `${sentence(answer.error?.message ?? '') || t('dsc.bridge_did_not_sign')} ${t('dsc.nothing_signed')}`;
  return {
    state: 'refused',
    title: known ? known.title() : t('dsc.token_did_not_sign'),
    // The signer's own Cancel is no problem: said as a notice, as Aadhaar's is.
    children: [
      code === 'cancelled'
        ? h('p', { class: 'notice dsc-outcome', dataset: { bridgeCode: code } }, text)
        : problemLine(text, { bridgeCode: code || 'unknown' }),
      actions(retry),
    ],
    message: `${text} ${t('dsc.can_try_again')}`,
    assertive: true,
  };
}

/** The bridge went away or refused the request itself. */
export function bridgeProblemScreen(error, retry) {
  const code = error?.code ?? '';
  const text = Object.hasOwn(BRIDGE_PROBLEMS, code)
    ? BRIDGE_PROBLEMS[code]()
    : `${sentence(error?.message ?? '') || t('dsc.bridge_did_not_sign')} ${t('dsc.nothing_signed_try_again')}`;
  return {
    state: 'bridge-problem',
    title: t('dsc.bridge_problem_title'),
    children: [problemLine(text, { bridgeCode: error?.code ?? 'unknown' }), actions(retry)],
    message: text,
    assertive: true,
  };
}

export const completingScreen = () => ({
  state: 'completing',
  title: t('dsc.completing_title'),
  children: [waitingLine(t('dsc.completing'))],
  message: t('dsc.completing_announce'),
});

export const completionRefusedScreen = (text, retry) => ({
  state: 'refused',
  title: t('dsc.completion_refused_title'),
  children: [problemLine(text), actions(retry)],
  message: text,
  assertive: true,
});

/** One certificate as a radio button: the holder's name, then its issuer, validity and token (its description). */
function certificateRow(certificate, index, checked) {
  const id = `dsc-certificate-${index}`;
  const input = h('input', {
    type: 'radio',
    name: 'dsc-certificate',
    id,
    value: certificate.id,
    checked,
    'aria-describedby': `${id}-details`,
  });
  const until = formatDateTime(certificate.not_after);
  const validity = certificate.validNow
    ? t('dsc.valid_until', { date: until })
    : new Date(certificate.not_after).getTime() < Date.now()
      ? t('dsc.expired_on', { date: until })
      : t('dsc.not_valid_yet', { date: formatDateTime(certificate.not_before) });
  const label = h(
    'label',
    { for: id, class: 'dsc-certificate__label' },
    h('span', { class: 'dsc-certificate__name' }, holderOf(certificate)),
    h(
      'span',
      { class: 'dsc-certificate__details', id: `${id}-details` },
      h('span', {}, t('dsc.issued_by', { issuer: issuerOf(certificate) })),
      h('span', { class: certificate.validNow ? null : 'dsc-certificate__invalid' }, validity),
      h('span', {}, certificate.token_label ? t('dsc.token', { label: certificate.token_label }) : t('dsc.token_unnamed')),
    ),
  );
  return { certificate, input, row: h('div', { class: 'checkbox-row dsc-certificate' }, input, label) };
}

/**
 * The certificates as radio buttons, the one chosen last (or the only one) chosen. `check()` refuses in place no choice
 * and a certificate not valid today (which the service would refuse, at the cost of an attempt).
 */
export function certificateChoice(certificates, chosenId) {
  const errorEl = h('p', { class: 'field-error', id: 'dsc-certificate-error', hidden: true });
  const preselect = certificates.find((c) => c.id === chosenId) ?? (certificates.length === 1 ? certificates[0] : null);
  const radios = certificates.map((certificate, index) => certificateRow(certificate, index, preselect?.id === certificate.id));
  const wrapper = h(
    'fieldset',
    { class: 'field field--radio dsc-certificates' },
    h('legend', {}, certificates.length === 1 ? t('dsc.certificate_legend') : t('dsc.certificate_legend_choose')),
    errorEl,
    h(
      'div',
      { class: 'radio-options' },
      radios.map((radio) => radio.row),
    ),
  );
  // The error describes every radio, so it is heard wherever focus lands in the group.
  const mark = (message) => {
    errorEl.textContent = message ?? '';
    errorEl.hidden = !message;
    for (const { input } of radios) {
      if (message) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
      input.setAttribute('aria-describedby', message ? `${input.id}-details ${errorEl.id}` : `${input.id}-details`);
    }
  };
  const chosen = () => radios.find((radio) => radio.input.checked)?.certificate ?? null;
  const check = () => {
    mark(null);
    const certificate = chosen();
    let message = null;
    if (!certificate) message = t('dsc.choose_certificate');
    else if (!certificate.validNow)
      message =
        new Date(certificate.not_after).getTime() < Date.now()
          ? t('dsc.certificate_expired', { date: formatDateTime(certificate.not_after) })
          : t('dsc.certificate_not_valid_yet');
    if (!message) return true;
    mark(message);
    announce(message, { assertive: true });
    (radios.find((radio) => radio.input.checked) ?? radios[0]).input.focus();
    return false;
  };
  return { wrapper, chosen, check };
}
