// One function per step of the signing panel: the requested checks (email and mobile OTP, location, face)
// and the signature itself. Each returns the step's element; `ctx` connects it to the page:
//   ctx.heading(text)      the step's <h2>, focused when the step appears
//   ctx.refresh(message)   reads the session again and shows whatever comes next
//   ctx.signed(view)       the signature is made; `view` is the session view /sign answered with
//   ctx.onLeave(fn)        cleanup when the step goes away (the camera)
//   ctx.failed(error)      true when the error changed the session (invalid link, conflict): handled there

import { ApiError, describeError, getJson, postBytes, postJson, sentence } from './api.js';
import { actionError, announce, busy, clearFieldError, field, formatTime, h, showFieldError } from './dom.js';

const CHECK_TITLES = {
  email: 'Verify email',
  mobile: 'Verify mobile number',
  location: 'Confirm location',
  face: 'Photo check',
};

export function stepTitle(step, signType) {
  if (step === 'sign') return signType === 'aadhaar' ? 'Sign with Aadhaar' : 'Sign';
  return CHECK_TITLES[step] ?? step;
}

/** Shows an API error next to `target` (a field or an action slot), announces it, and focuses the control. */
function report(error, target, focusEl, { except = [] } = {}) {
  const message = describeError(error, { except });
  if (target.input) showFieldError(target, message);
  else target.show(message);
  announce(message, { assertive: true });
  focusEl?.focus();
  return message;
}

function formatDistance(metres) {
  if (!Number.isFinite(metres)) return '';
  return metres >= 1000 ? `${(metres / 1000).toFixed(metres >= 10_000 ? 0 : 1)} km` : `${Math.round(metres)} m`;
}

// ---------------------------------------------------------------- email and mobile OTP

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

// ---------------------------------------------------------------- location

const GEO_HELP = {
  1: 'Your browser blocked access to your location. To allow it, open the site settings (the icon next to the address bar), set Location to “Allow”, then choose “Try again”. On a phone, location services must also be turned on in the phone’s settings.',
  2: 'Your device could not find its location. Turn on location services (and Wi-Fi if you can), then try again.',
  3: 'Finding your location took too long. Try again, ideally with Wi-Fi on or near a window.',
};

function currentPosition() {
  return new Promise((resolve, reject) =>
    navigator.geolocation.getCurrentPosition(resolve, reject, { enableHighAccuracy: true, timeout: 20_000, maximumAge: 0 }),
  );
}

export function locationStep(ctx, check) {
  const fromDevice = check.source !== 'ip';
  const heading = ctx.heading('Confirm your location');
  const intro = h(
    'p',
    {},
    fromDevice
      ? 'The sender asks to record where you sign. When your browser asks, allow it to share your location.'
      : 'The sender asks to record where you sign. Your approximate location is taken from your internet connection.',
  );
  const fence = check.geofence
    ? h('p', {}, `You need to be within ${formatDistance(check.geofence.radius)} of the place the sender chose.`)
    : null;
  const share = h(
    'button',
    { type: 'button', class: 'button button--primary' },
    fromDevice ? 'Share my location' : 'Confirm my location',
  );
  const help = h('p', { class: 'help', hidden: true });
  const error = actionError();

  share.addEventListener('click', () =>
    busy(share, fromDevice ? 'Finding your location…' : 'Confirming…', async () => {
      error.clear();
      help.hidden = true;
      let body = {};
      if (fromDevice) {
        if (!window.isSecureContext || !('geolocation' in navigator)) {
          report(new ApiError(400, 'This browser cannot share its location on this page. Try another browser.'), error, share);
          return;
        }
        try {
          const { coords } = await currentPosition();
          body = { latitude: coords.latitude, longitude: coords.longitude, accuracy: coords.accuracy };
        } catch (geoError) {
          help.textContent = GEO_HELP[geoError.code] ?? GEO_HELP[2];
          help.hidden = false;
          share.textContent = 'Try again';
          announce(help.textContent, { assertive: true });
          return;
        }
      }
      try {
        await postJson('/location', body);
        announce('Location confirmed.');
        await ctx.refresh();
      } catch (failure) {
        if (!ctx.failed(failure)) report(failure, error, share);
      }
    }),
  );

  return h('div', { class: 'step', dataset: { step: 'location' } }, heading, intro, fence, share, help, error.el);
}

// ---------------------------------------------------------------- face

const MAX_PHOTO_SIDE = 1280;

/** A JPEG of at most MAX_PHOTO_SIDE pixels a side, from a video frame or a chosen image. */
async function jpegOf(source, width, height) {
  const scale = Math.min(1, MAX_PHOTO_SIDE / Math.max(width, height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  canvas.getContext('2d').drawImage(source, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no image'))), 'image/jpeg', 0.9),
  );
}

const NO_PICTURE_YET = 'The camera has not given a picture yet. Choose “Take photo” again, or choose a photo instead.';
const CAMERA_REFUSED =
  'Camera access was refused. Allow the camera in your browser’s site settings and choose “Start camera” again, or choose a photo instead.';
const NO_CAMERA = 'No camera is available. Choose a photo instead.';

export function faceStep(ctx, check) {
  const heading = ctx.heading('Take a photo of your face');
  const intro = h(
    'p',
    {},
    'The sender asks to compare a live photo of you with a reference photo. Face the camera in good light.',
  );
  const attempts = h(
    'p',
    { class: 'hint' },
    Number.isInteger(check.attempts_left) ? `Attempts left: ${check.attempts_left}.` : '',
  );
  const video = h('video', {
    class: 'camera',
    autoplay: true,
    playsinline: true,
    muted: true,
    'aria-label': 'Camera preview',
    hidden: true,
  });
  const preview = h('img', { class: 'photo-preview', alt: 'The photo you are about to send', hidden: true });
  const start = h('button', { type: 'button', class: 'button button--primary' }, 'Start camera');
  const capture = h('button', { type: 'button', class: 'button button--primary', hidden: true }, 'Take photo');
  const use = h('button', { type: 'button', class: 'button button--primary', hidden: true }, 'Use this photo');
  const retake = h('button', { type: 'button', class: 'button button--secondary', hidden: true }, 'Retake photo');
  const picker = field({
    label: 'Or choose a photo of your face',
    hint: 'JPEG or PNG. On a phone this can open the front camera.',
    name: 'face-photo',
    attrs: { type: 'file', accept: 'image/jpeg,image/png', capture: 'user' },
  });
  const error = actionError();
  let stream = null;
  let photo = null;
  let previewUrl = null;

  const stopCamera = () => {
    stream?.getTracks().forEach((track) => track.stop());
    stream = null;
    video.srcObject = null;
    video.hidden = true;
    capture.hidden = true;
  };
  const setPhoto = (blob) => {
    photo = blob;
    if (previewUrl) URL.revokeObjectURL(previewUrl);
    previewUrl = URL.createObjectURL(blob);
    preview.src = previewUrl;
    preview.hidden = false;
    use.hidden = false;
    retake.hidden = false;
    use.focus();
  };
  ctx.onLeave(() => {
    stopCamera();
    if (previewUrl) URL.revokeObjectURL(previewUrl);
  });

  start.addEventListener('click', async () => {
    error.clear();
    if (!navigator.mediaDevices?.getUserMedia) {
      report(new ApiError(400, NO_CAMERA), error, picker.input);
      return;
    }
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user' }, audio: false });
    } catch (failure) {
      const refused = failure?.name === 'NotAllowedError' || failure?.name === 'SecurityError';
      report(new ApiError(400, refused ? CAMERA_REFUSED : NO_CAMERA), error, picker.input);
      return;
    }
    video.srcObject = stream;
    video.hidden = false;
    start.hidden = true;
    capture.hidden = false;
    capture.focus();
  });

  capture.addEventListener('click', async () => {
    if (!stream) return;
    // A click before the camera's first frame (a slow camera, a busy machine) waits for it rather than doing nothing.
    if (!video.videoWidth) {
      await new Promise((resolve) => {
        video.addEventListener('loadeddata', resolve, { once: true });
        setTimeout(resolve, 5000);
      });
    }
    if (!stream || !video.videoWidth) {
      report(new ApiError(400, NO_PICTURE_YET), error, picker.input);
      return;
    }
    const blob = await jpegOf(video, video.videoWidth, video.videoHeight);
    stopCamera();
    setPhoto(blob);
  });

  retake.addEventListener('click', () => {
    photo = null;
    preview.hidden = true;
    use.hidden = true;
    retake.hidden = true;
    picker.input.value = '';
    start.hidden = false;
    start.focus();
  });

  picker.input.addEventListener('change', async () => {
    clearFieldError(picker);
    const file = picker.input.files?.[0];
    if (!file) return;
    try {
      const bitmap = await createImageBitmap(file);
      const blob = await jpegOf(bitmap, bitmap.width, bitmap.height);
      bitmap.close();
      stopCamera();
      start.hidden = true;
      setPhoto(blob);
    } catch {
      report(new ApiError(400, 'unsupported_media_type'), picker, picker.input);
    }
  });

  use.addEventListener('click', () =>
    busy(use, 'Checking the photo…', async () => {
      if (!photo) return;
      error.clear();
      try {
        const result = await postBytes('/face', photo);
        announce('Photo check passed.');
        stopCamera();
        await ctx.refresh();
        return result;
      } catch (failure) {
        if (ctx.failed(failure)) return;
        const left = failure instanceof ApiError ? failure.problems.find((p) => /attempt/.test(p.problem)) : null;
        if (left) attempts.textContent = `${left.problem[0].toUpperCase()}${left.problem.slice(1)}.`;
        report(failure, error, retake);
      }
    }),
  );

  return h(
    'div',
    { class: 'step', dataset: { step: 'face' } },
    heading,
    intro,
    attempts,
    h('div', { class: 'camera-frame' }, video, preview),
    h('div', { class: 'actions' }, start, capture, use, retake),
    error.el,
    picker.wrapper,
  );
}

// ---------------------------------------------------------------- signing

const CONSENT_REQUIRED = 'Tick the box to confirm that you agree to sign.';

function consentField(label) {
  return field({ label, name: 'consent', control: 'checkbox' });
}

function requireConsent(consent) {
  clearFieldError(consent);
  if (consent.input.checked) return true;
  showFieldError(consent, CONSENT_REQUIRED);
  announce(CONSENT_REQUIRED, { assertive: true });
  consent.input.focus();
  return false;
}

/** suresign and pfx: consent, then one request. */
export function consentSignStep(ctx, view) {
  const heading = ctx.heading('Sign the document');
  const how =
    view.signer.sign_type === 'pfx'
      ? 'The document is signed with the sender’s digital signing certificate on your behalf; your consent and the time are recorded in the signature.'
      : 'Your electronic signature is applied with a document-signing certificate; your name and the time are recorded in the signature.';
  const consent = consentField('I have read the document and I agree to sign it electronically.');
  const submit = h('button', { type: 'submit', class: 'button button--primary' }, 'Sign the document');
  const error = actionError();
  const form = h('form', { class: 'stack', novalidate: true }, consent.wrapper, submit, error.el);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    if (!requireConsent(consent)) return;
    busy(submit, 'Signing…', async () => {
      try {
        ctx.signed(await postJson('/sign', { consent: true }));
      } catch (failure) {
        if (ctx.failed(failure)) return;
        if (failure instanceof ApiError && failure.problemFor('consent')) report(failure, consent, consent.input);
        else report(failure, error, submit);
      }
    });
  });
  return h('div', { class: 'step', dataset: { step: 'sign' } }, heading, h('p', {}, how), form);
}

// ---------------------------------------------------------------- Aadhaar eSign through the ESP

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

const attemptsText = (left) => (left === null ? '' : left === 1 ? 'You have 1 attempt left.' : `You have ${left} attempts left.`);

/** What the polling compares: a change of any of these shows the page anew. */
const espStateOf = (view) =>
  [view.session.status, view.signer.status, view.signer.esp_transaction?.txn, view.signer.esp_transaction?.status].join('|');

/**
 * Aadhaar eSign through the eSign Service Provider (ESP), the CCA way: the signer consents here, the page posts
 * the signed request to the ESP in this tab, the signer authenticates on the ESP's own pages (Aadhaar number, then
 * OTP or fingerprint), and the ESP sends them back to /sign/return, which brings them here. The step follows the
 * signer's latest ESP transaction (`signer.esp_transaction`): none, failed or expired -> consent and go (again);
 * pending (or completed while the signature is being recorded) -> wait, reading the session every 2 s.
 */
export function aadhaarSignStep(ctx, view) {
  const transaction = view.signer.esp_transaction ?? null;
  if (transaction?.status === 'pending' || transaction?.status === 'completed') return espWaitingStep(ctx, view, transaction);
  return espStartStep(ctx, view, transaction);
}

/**
 * Consent and go. `restart`: the signer left an open transaction at the ESP and starts over; /esp/start then
 * abandons that one (at no cost) instead of refusing.
 */
function espStartStep(ctx, view, transaction, { restart = false } = {}) {
  const status = transaction?.status ?? null;
  const again = status === 'failed' || status === 'expired';
  // The signer's own Cancel at the ESP: not a failure, and it cost no attempt.
  const cancelled = status === 'failed' && transaction.cancelled_by_signer === true;
  const heading = ctx.heading(
    cancelled
      ? 'You cancelled Aadhaar eSign'
      : status === 'failed'
        ? 'Aadhaar eSign did not go through'
        : status === 'expired'
          ? 'Aadhaar eSign timed out'
          : 'Sign with Aadhaar eSign',
  );
  let outcome = null;
  if (cancelled) {
    const text =
      'You cancelled at the eSign Service Provider, so nothing was signed. Cancelling does not use up an attempt; you can start again.';
    outcome = h('p', { class: 'notice esp-outcome', dataset: { espStatus: 'cancelled' } }, text);
    announce(text);
  } else if (again) {
    const why =
      status === 'failed'
        ? sentence(transaction.error_message ?? '') || 'The eSign Service Provider could not sign the document.'
        : 'The eSign Service Provider did not confirm your signature in time.';
    const text = [why, attemptsText(attemptsLeftOf(view.signer)), 'You can try again.'].filter(Boolean).join(' ');
    outcome = h('p', { class: 'action-error esp-outcome', dataset: { espStatus: status } }, text);
    announce(text, { assertive: true });
  }
  const intro = h(
    'p',
    {},
    'You continue on the website of the eSign Service Provider, in this tab. There you enter your Aadhaar number and confirm with the one-time password (OTP) sent to the mobile number linked to it, or with your fingerprint. The provider then signs the document in your name and brings you back here.',
  );
  const consent = field({
    label: 'I agree to authenticate with Aadhaar and to sign this document through the eSign Service Provider.',
    hint: 'You type your Aadhaar number on the provider’s page only; this site does not see it.',
    name: 'consent',
    control: 'checkbox',
  });
  const submit = h(
    'button',
    { type: 'submit', class: 'button button--primary' },
    cancelled ? 'Start again' : again ? 'Try again' : 'Continue to Aadhaar eSign',
  );
  const error = actionError();
  const form = h('form', { class: 'stack', novalidate: true }, consent.wrapper, submit, error.el);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    if (!requireConsent(consent)) return;
    busy(submit, 'Opening Aadhaar eSign…', async () => {
      let started;
      try {
        started = await postJson('/esp/start', restart ? { consent: true, restart: true } : { consent: true });
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
        report(new ApiError(502, 'The eSign Service Provider could not be reached. Try again in a moment.'), error, submit);
        return;
      }
      try {
        sessionStorage.setItem(RETURN_PATH_KEY, location.pathname);
      } catch {
        // No storage (a privacy mode): the return page then asks to open the signing link again.
      }
      ctx.replaceStep(espHandoffStep(ctx, target));
    });
  });
  return h('div', { class: 'step', dataset: { step: 'sign', esp: status ?? 'none' } }, heading, outcome, intro, form);
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
function espHandoffStep(ctx, target) {
  const heading = ctx.heading('Opening Aadhaar eSign…');
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
    h('p', {}, 'Taking you to the eSign Service Provider. If nothing happens, choose Continue.'),
    h('button', { type: 'submit', class: 'button button--primary' }, 'Continue'),
  );
  announce('Taking you to the eSign Service Provider…');
  // After the step is in the document (replaceStep appends it once this returns).
  setTimeout(() => {
    // The prototype's submit: a field named `submit` could not shadow it.
    if (form.isConnected) HTMLFormElement.prototype.submit.call(form);
  }, 0);
  return h('div', { class: 'step', dataset: { step: 'sign', esp: 'handoff' } }, heading, form);
}

function espWaitingStep(ctx, view, transaction) {
  const pending = transaction.status === 'pending';
  const heading = ctx.heading('Waiting for the eSign provider…');
  const text = pending
    ? 'The eSign Service Provider has not confirmed your signature yet. This page updates by itself as soon as it does.'
    : 'The eSign Service Provider has signed. Your signature is being added to the document.';
  let later = null;
  if (pending) {
    // The signer may have left the ESP's pages (the browser's Back button, a closed tab): they need not wait for the
    // transaction to time out.
    const closes = transaction.expires_at ? formatTime(transaction.expires_at) : '';
    const restart = h('button', { type: 'button', class: 'button button--secondary' }, 'Start again');
    restart.addEventListener('click', () => ctx.replaceStep(espStartStep(ctx, view, null, { restart: true })));
    later = h(
      'div',
      { class: 'esp-restart' },
      h(
        'p',
        { class: 'hint' },
        `Left the eSign provider’s pages before finishing? Start again; the earlier attempt is then closed and not counted.${closes ? ` Otherwise it stays open until ${closes}.` : ''}`,
      ),
      restart,
    );
  }
  announce(pending ? 'Waiting for the eSign provider.' : text);

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

  return h(
    'div',
    { class: 'step', dataset: { step: 'sign', esp: transaction.status } },
    heading,
    h('p', { class: 'waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text),
    later,
  );
}

// ---------------------------------------------------------------- declining

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
