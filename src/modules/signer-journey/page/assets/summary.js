// The signing layout's fixed parts: who asks to sign what (the summary), where the signature goes, and the zoom
// of the pages.

import { formatDateTime, h } from './dom.js';
import { requesterOf } from './branding.js';

const SIGN_TYPE_TEXT = {
  aadhaar: 'Aadhaar eSign',
  suresign: 'Electronic signature',
  pfx: 'Digital signature certificate of the sender',
  dsc: 'Your Digital Signature Certificate (DSC token)',
};

export function summaryOf(view) {
  const { session, signer } = view;
  const requester = requesterOf(session);
  const fact = (term, value) => (value ? h('div', { class: 'fact' }, h('dt', {}, term), h('dd', {}, value)) : null);
  const title = h('h1', { id: 'doc-title', class: 'doc-title', tabindex: '-1' }, session.filename);
  return {
    title,
    element: h(
      'section',
      { class: 'summary', 'aria-labelledby': 'doc-title' },
      h('p', { class: 'eyebrow' }, requester ? `${requester} asks you to sign` : 'You are asked to sign'),
      title,
      h(
        'dl',
        { class: 'facts' },
        fact('Requested by', requester),
        fact('Signing as', signer.full_name),
        fact('Reason', signer.reason),
        fact('How you sign', SIGN_TYPE_TEXT[signer.sign_type] ?? signer.sign_type),
        fact(
          'Signer',
          session.signer_count > 1 ? `${(session.signer_idx ?? 0) + 1} of ${session.signer_count} is signing now` : null,
        ),
        fact('Link valid until', session.expires_at ? formatDateTime(session.expires_at) : null),
      ),
    ),
  };
}

export function pagesText(fields) {
  const pages = [...new Set(fields.map((field) => field.page + 1))].sort((a, b) => a - b);
  if (pages.length === 0) return 'Your signature is added to the document without a visible box.';
  const list = pages.length === 1 ? `page ${pages[0]}` : `pages ${pages.slice(0, -1).join(', ')} and ${pages.at(-1)}`;
  return `Your signature will be placed on ${list}, in the outlined ${fields.length === 1 ? 'box' : 'boxes'}.`;
}

const ZOOMS = [1, 1.5, 2, 3];

/**
 * Zoom for the pages (fit to width is 100%): a phone shows an A4 page's text at about 6 px, so the signer can
 * enlarge it; the pages then scroll sideways, and are drawn again at the new size. The browser's own pinch zoom
 * stays allowed (the viewport meta does not restrict scaling, and nothing sets touch-action).
 */
export function zoomControls(pages) {
  let index = 0;
  const level = h('output', { class: 'zoom__level', 'aria-live': 'polite' }, '100%');
  const out = h('button', { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': 'Zoom out' }, '−');
  const into = h('button', { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': 'Zoom in' }, '+');
  const set = (next) => {
    index = Math.max(0, Math.min(ZOOMS.length - 1, next));
    pages.style.setProperty('--zoom', String(ZOOMS[index]));
    pages.dataset.zoom = String(ZOOMS[index]);
    // Zoomed, the list scrolls sideways: keyboard users reach it with Tab and scroll it with the arrow keys.
    if (index > 0) pages.setAttribute('tabindex', '0');
    else pages.removeAttribute('tabindex');
    level.textContent = `${Math.round(ZOOMS[index] * 100)}%`;
    out.setAttribute('aria-disabled', String(index === 0));
    into.setAttribute('aria-disabled', String(index === ZOOMS.length - 1));
    pages.redraw?.();
  };
  out.addEventListener('click', () => set(index - 1));
  into.addEventListener('click', () => set(index + 1));
  out.setAttribute('aria-disabled', 'true');
  return h('div', { class: 'zoom', role: 'group', 'aria-label': 'Zoom the pages' }, out, level, into);
}
