// Small DOM helpers: elements are built with textContent only (never innerHTML), so nothing the API
// returns can become markup.

import { currentLocale } from './i18n.js';

/**
 * h('p', { class: 'hint', id: 'x' }, 'text', child) -> element. Props: class, text, on (events),
 * dataset, boolean attributes as true/false, everything else as attributes.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key === 'text') element.textContent = value;
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

let announceTimer;

/** Says `text` through the page's live regions: assertive for problems, polite for progress. */
export function announce(text, { assertive = false } = {}) {
  const region = document.getElementById(assertive ? 'announcer' : 'status');
  const other = document.getElementById(assertive ? 'status' : 'announcer');
  other.textContent = '';
  // Emptied first, so that the same message twice in a row is announced twice.
  region.textContent = '';
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    region.textContent = text;
  }, 50);
}

/**
 * Moves focus to a step's heading (focusable by script only), scrolling it into view: screen readers start reading
 * there. The heading shows no focus ring (signer.css): it is not a control, and keyboard users cannot Tab to it.
 */
export function focusHeading(heading) {
  if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  heading.focus({ preventScroll: false });
}

let uid = 0;
const nextId = (prefix) => `${prefix}-${++uid}`;

/**
 * A labelled control with an optional hint and an error slot that is tied to it with aria-describedby.
 * `control` is 'input' (default) or 'checkbox'.
 */
export function field({ label, hint, name, control = 'input', attrs = {} }) {
  const id = nextId(name);
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  const errorEl = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  if (control === 'checkbox') {
    const input = h('input', { type: 'checkbox', id, name, ...attrs });
    const wrapper = h(
      'div',
      { class: 'field field--checkbox' },
      h('div', { class: 'checkbox-row' }, input, h('label', { for: id }, label)),
      hintEl,
      errorEl,
    );
    describe(input, hintEl, null);
    return { wrapper, input, errorEl, hintEl };
  }
  const input = h('input', { id, name, type: 'text', ...attrs });
  const wrapper = h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, errorEl, input);
  describe(input, hintEl, null);
  return { wrapper, input, errorEl, hintEl };
}

function describe(input, hintEl, errorEl) {
  const ids = [hintEl?.id, errorEl?.id].filter(Boolean);
  if (ids.length) input.setAttribute('aria-describedby', ids.join(' '));
  else input.removeAttribute('aria-describedby');
}

/** Shows `message` next to a field's control and marks the control invalid. */
export function showFieldError(f, message) {
  f.errorEl.textContent = message;
  f.errorEl.hidden = false;
  f.input.setAttribute('aria-invalid', 'true');
  describe(f.input, f.hintEl, f.errorEl);
}

export function clearFieldError(f) {
  f.errorEl.textContent = '';
  f.errorEl.hidden = true;
  f.input.removeAttribute('aria-invalid');
  describe(f.input, f.hintEl, null);
}

/** An error slot for messages that belong to an action (a button) rather than to one input. */
export function actionError() {
  const el = h('p', { class: 'action-error', id: nextId('action-error'), hidden: true });
  return {
    el,
    show(message) {
      el.textContent = message;
      el.hidden = false;
    },
    clear() {
      el.textContent = '';
      el.hidden = true;
    },
  };
}

/**
 * Marks a button busy while `run` is pending; a second press meanwhile does nothing. The button stays
 * focusable (aria-disabled, not disabled), so keyboard focus is not lost while the request runs.
 */
export async function busy(button, busyLabel, run) {
  if (button.getAttribute('aria-busy') === 'true') return undefined;
  const label = button.textContent;
  button.setAttribute('aria-disabled', 'true');
  button.setAttribute('aria-busy', 'true');
  button.textContent = busyLabel;
  try {
    return await run();
  } finally {
    button.removeAttribute('aria-disabled');
    button.removeAttribute('aria-busy');
    // `run` may have renamed the button for what it does next ("Send a new code"): that name stays.
    if (button.textContent === busyLabel) button.textContent = label;
  }
}

/**
 * Times are shown in Indian Standard Time and say so ("26 Nov 2026, 3:30 pm IST"), whatever the device's zone, in the
 * signer's language (its month names and day periods): the service signs Indian documents, its invitations, ESPs and
 * stamp papers all speak IST, and a time without a zone is ambiguous for a signer abroad.
 */
const IST = 'Asia/Kolkata';

export function formatDateTime(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const options = { day: 'numeric', month: 'short', year: 'numeric', hour: 'numeric', minute: '2-digit' };
  return date.toLocaleString(currentLocale(), { ...options, timeZone: IST, timeZoneName: 'short' });
}

export function formatTime(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleTimeString(currentLocale(), { hour: 'numeric', minute: '2-digit', timeZone: IST, timeZoneName: 'short' });
}
