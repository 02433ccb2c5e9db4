// What the DSC step shows in each of its states (steps/dsc.js draws them): each builder answers the state's name,
// its heading, its content and what the live region says. Problems say what happened and what to do.

import { describeError, sentence } from '../api.js';
import { announce, formatDateTime, h } from '../dom.js';
import { holderOf, issuerOf } from './dsc-bridge.js';

/** Why the service refused the certificate, in the signer's words; the service's own problem text follows. */
const REFUSALS = {
  dsc_untrusted: 'This certificate was not issued by a Certifying Authority that this service trusts.',
  dsc_expired: 'This certificate is not valid today (it has expired, or is not valid yet).',
  dsc_no_non_repudiation: 'This certificate is not meant for signing documents (it lacks the non-repudiation use).',
  dsc_revoked: 'This certificate has been revoked by its Certifying Authority.',
  dsc_name_mismatch: 'The name on this certificate does not match the name you were asked to sign as.',
  dsc_not_pinned: 'The sender asked you to sign with a different certificate.',
  dsc_certificate_invalid: 'This certificate could not be read.',
  dsc_revocation_unavailable:
    'The Certifying Authority could not be asked whether this certificate is still valid. Try again in a moment.',
  dsc_signature_invalid: 'The token’s signature does not match the certificate you chose, so nothing was signed.',
};

/** A refusal of an earlier visit's transaction, said over the certificates when the signer comes back. */
export const EARLIER_SIGNATURE_INVALID = REFUSALS.dsc_signature_invalid;

/** Why the bridge did not sign, and what to do about it. */
const BRIDGE_REFUSALS = {
  cancelled: {
    title: 'You cancelled in the DSC bridge',
    text: 'You chose Cancel in the DSC bridge, so nothing was signed. Cancelling does not use up an attempt.',
  },
  token_removed: {
    title: 'The token was removed',
    text: 'The token was unplugged before it signed, so nothing was signed: plug it in again and try again.',
  },
  pin_locked: {
    title: 'Your token is locked',
    text: 'Your token is locked after too many wrong PINs, so nothing was signed. Unlock it with your token vendor’s tool (it needs the admin or SO PIN) or ask your Certifying Authority, then try again.',
  },
  key_not_found: {
    title: 'No key for this certificate',
    text: 'The token holds no private key for this certificate, so nothing was signed. Choose another certificate, or ask your Certifying Authority.',
  },
  expired: {
    title: 'The request in the bridge timed out',
    text: 'The DSC bridge waits five minutes for your PIN; nothing was signed in time. Try again.',
  },
};

const attemptsText = (left) =>
  Number.isInteger(left) ? (left === 1 ? 'You have 1 attempt left.' : `You have ${left} attempts left.`) : '';

/** The service's refusal of a certificate (or of a signature) in the signer's words, its problem, the attempts left. */
export function refusalText(failure, attemptsLeft = null) {
  // The attempts left are said once, in the page's words: the problem's own count is left out.
  const problem = (failure.problemFor('certificate') ?? failure.problemFor('signatures'))?.replace(
    / \(\d+ attempt\(s\) left\)$/,
    '',
  );
  return [REFUSALS[failure.code] ?? describeError(failure), problem ? sentence(problem) : '', attemptsText(attemptsLeft)]
    .filter(Boolean)
    .join(' ');
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
    h('span', { class: 'visually-hidden' }, ' (opens in a new tab)'),
  );

export const lookingScreen = () => ({
  state: 'looking',
  title: 'Sign with your DSC token',
  children: [waitingLine('Looking for the DSC bridge on this computer…')],
  message: 'Looking for the DSC bridge on this computer.',
});

export function noBridgeScreen(settings, retry) {
  const steps = h(
    'ol',
    { class: 'dsc-howto' },
    h(
      'li',
      {},
      settings.download ? h('a', { href: settings.download }, 'Download the DSC bridge') : 'Get the DSC bridge',
      ' and install it on this computer (once).',
    ),
    h('li', {}, 'Start it, with your token plugged in.'),
    h('li', {}, 'Then choose Try again below.'),
  );
  return {
    state: 'no-bridge',
    title: 'The DSC bridge is not running on this computer',
    children: [
      problemLine('The DSC bridge is not running on this computer, so this page cannot reach your token.'),
      h(
        'p',
        {},
        'To sign with the Digital Signature Certificate on your USB token, a small program, the DSC bridge, has to run on this computer. Your token’s PIN is typed in the bridge, never on this page.',
      ),
      steps,
      settings.help ? h('p', {}, newTabLink(settings.help, 'How to install and start the DSC bridge')) : null,
      h(
        'p',
        { class: 'hint' },
        'If your browser asks whether this site may look for and connect to devices on your local network, allow it: the bridge runs on this computer.',
      ),
      h(
        'p',
        { class: 'hint' },
        `Already running? Then it was started for another site: start it again with --origin ${location.origin}.`,
      ),
      actions(retry),
    ],
    message: 'The DSC bridge is not running on this computer. Start it, then choose Try again.',
    assertive: true,
  };
}

/** The bridge answers but lists no certificate of the signer's: what it does see, when that helps. */
export function noTokenScreen(status, certificates, retry) {
  const modules = Array.isArray(status?.modules) ? status.modules : [];
  const tokens = Array.isArray(status?.tokens) ? status.tokens : [];
  const unloaded = modules.filter((module) => module && module.loaded === false);
  const seen = tokens.map((token) => `“${token.label}”`).join(', ');
  const error = unloaded[0]?.error ? ` (${sentence(unloaded[0].error).replace(/\.$/, '')})` : '';
  return {
    state: 'no-token',
    title: 'No token found',
    children: [
      problemLine('No token found: plug in your DSC token (and check its driver is installed).'),
      unloaded.length
        ? h(
            'p',
            { class: 'hint' },
            `The bridge could not load the token driver ${unloaded.map((m) => m.path).join(', ')}${error}.`,
          )
        : null,
      tokens.length
        ? h(
            'p',
            { class: 'hint' },
            certificates.length
              ? `The bridge sees ${seen}, but only Certifying Authority certificates on it, no certificate of yours.`
              : `The bridge sees ${seen}, but no certificate on it.`,
          )
        : null,
      h('p', {}, 'Then choose Try again.'),
      actions(retry),
    ],
    message: 'No token found: plug in your DSC token, then choose Try again.',
    assertive: true,
  };
}

export const requestingScreen = (which) => ({
  state: 'requesting',
  title: 'Approve in the DSC bridge',
  children: [waitingLine(`Asking the DSC bridge to sign ${which}…`)],
  message: 'Asking the DSC bridge to sign.',
});

/** The request is in the bridge: the signer opens its page (a link: a window opened by script after a wait is blocked). */
export function approveScreen({ which, index, count, approveUrl, requestId, stop }) {
  return {
    state: 'approve',
    title: count > 1 ? `Approve document ${index + 1} of ${count} in the DSC bridge` : 'Approve in the DSC bridge',
    children: [
      h('p', { class: 'notice dsc-instruction' }, h('strong', {}, 'Enter your token PIN in the bridge window.')),
      h(
        'p',
        {},
        `Open the DSC bridge with the button below: its own page opens in a new tab and asks you to sign ${which}. Check what it shows, type your token’s PIN there and choose Sign. This page carries on by itself.`,
      ),
      actions(
        newTabLink(approveUrl, 'Open the DSC bridge to enter your PIN', {
          class: 'button button--primary dsc-approve-link',
          dataset: { request: requestId },
        }),
      ),
      waitingLine('Waiting for you to approve in the bridge…'),
      actions(stop),
    ],
    message: 'Enter your token PIN in the bridge window: open the DSC bridge with the button on this page.',
  };
}

/** The bridge's answer when it did not sign: cancelled, token removed, PIN locked, no key, timed out. */
export function bridgeRefusalScreen(answer, retry) {
  const code = answer.status === 'expired' ? 'expired' : (answer.error?.code ?? '');
  const known = BRIDGE_REFUSALS[code];
  const text = known?.text ?? `${sentence(answer.error?.message ?? '') || 'The DSC bridge did not sign.'} Nothing was signed.`;
  return {
    state: 'refused',
    title: known?.title ?? 'The token did not sign',
    // The signer's own Cancel is no problem: said as a notice, as Aadhaar's is.
    children: [
      code === 'cancelled'
        ? h('p', { class: 'notice dsc-outcome', dataset: { bridgeCode: code } }, text)
        : problemLine(text, { bridgeCode: code || 'unknown' }),
      actions(retry),
    ],
    message: `${text} You can try again.`,
    assertive: true,
  };
}

/** The bridge went away or refused the request itself. */
export function bridgeProblemScreen(error, retry) {
  const texts = {
    certificate_not_found: 'The token with this certificate is no longer plugged in: plug it in again and try again.',
    request_not_found: 'The DSC bridge no longer knows this request (was it restarted?). Nothing was signed; try again.',
    too_many_requests: 'The DSC bridge has too many requests waiting. Wait a moment and try again.',
    unreachable: 'The DSC bridge stopped answering. Check that it still runs, then try again. Nothing was signed.',
  };
  const text =
    texts[error?.code] ?? `${sentence(error?.message ?? '') || 'The DSC bridge did not sign.'} Nothing was signed; try again.`;
  return {
    state: 'bridge-problem',
    title: 'The DSC bridge did not sign',
    children: [problemLine(text, { bridgeCode: error?.code ?? 'unknown' }), actions(retry)],
    message: text,
    assertive: true,
  };
}

export const completingScreen = () => ({
  state: 'completing',
  title: 'Adding your signature',
  children: [waitingLine('Your token has signed. Your signature is being added to the document…')],
  message: 'Your token has signed. Adding your signature to the document.',
});

export const completionRefusedScreen = (text, retry) => ({
  state: 'refused',
  title: 'Your signature could not be added',
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
    ? `Valid until ${until}`
    : new Date(certificate.not_after).getTime() < Date.now()
      ? `Expired on ${until}`
      : `Not valid yet (from ${formatDateTime(certificate.not_before)})`;
  const label = h(
    'label',
    { for: id, class: 'dsc-certificate__label' },
    h('span', { class: 'dsc-certificate__name' }, holderOf(certificate)),
    h(
      'span',
      { class: 'dsc-certificate__details', id: `${id}-details` },
      h('span', {}, `Issued by ${issuerOf(certificate)}`),
      h('span', { class: certificate.validNow ? null : 'dsc-certificate__invalid' }, validity),
      h('span', {}, `Token: ${certificate.token_label || 'unnamed token'}`),
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
    h('legend', {}, certificates.length === 1 ? 'Certificate to sign with' : 'Choose the certificate to sign with'),
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
    if (!certificate) message = 'Choose the certificate to sign with.';
    else if (!certificate.validNow)
      message =
        new Date(certificate.not_after).getTime() < Date.now()
          ? `This certificate expired on ${formatDateTime(certificate.not_after)}: choose another one, or renew it with your Certifying Authority.`
          : 'This certificate is not valid yet: choose another one.';
    if (!message) return true;
    mark(message);
    announce(message, { assertive: true });
    (radios.find((radio) => radio.input.checked) ?? radios[0]).input.focus();
    return false;
  };
  return { wrapper, chosen, check };
}
