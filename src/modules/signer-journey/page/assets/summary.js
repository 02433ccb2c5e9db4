// The signing layout's fixed parts: who asks to sign what (the summary), where the signature goes, and the zoom
// of the pages.

import { formatDateTime, h } from './dom.js';
import { requesterOf } from './branding.js';
import { currentLocale, t } from './i18n.js';

/** The catalog's key of each way of signing (read at render time: the catalog loads after the modules). */
const SIGN_TYPE_KEYS = {
  aadhaar: 'summary.sign_type_aadhaar',
  suresign: 'summary.sign_type_suresign',
  pfx: 'summary.sign_type_pfx',
  dsc: 'summary.sign_type_dsc',
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
      h('p', { class: 'eyebrow' }, t('summary.asks_you', { who: requester ? 'named' : 'other', requester: requester ?? '' })),
      title,
      h(
        'dl',
        { class: 'facts' },
        fact(t('summary.requested_by'), requester),
        fact(t('summary.signing_as'), signer.full_name),
        fact(t('summary.reason'), signer.reason),
        fact(
          t('summary.how_you_sign'),
          SIGN_TYPE_KEYS[signer.sign_type] ? t(SIGN_TYPE_KEYS[signer.sign_type]) : signer.sign_type,
        ),
        fact(
          t('summary.signer'),
          session.signer_count > 1
            ? t('summary.signer_position', { position: (session.signer_idx ?? 0) + 1, count: session.signer_count })
            : null,
        ),
        fact(t('summary.link_valid_until'), session.expires_at ? formatDateTime(session.expires_at) : null),
      ),
    ),
  };
}

export function pagesText(fields) {
  const pages = [...new Set(fields.map((field) => field.page + 1))].sort((a, b) => a - b);
  if (pages.length === 0) return t('summary.no_visible_box');
  // The page numbers as the language lists them ("2, 3 and 5"): data, joined by Intl, not by translated pieces.
  const list = new Intl.ListFormat(currentLocale(), { type: 'conjunction' }).format(pages.map(String));
  return t('summary.placed_on', { pageCount: pages.length, pages: list, boxes: fields.length });
}

const ZOOMS = [1, 1.5, 2, 3];

/**
 * Zoom for the pages (fit to width is 100%): a phone shows an A4 page's text at about 6 px, so the signer can
 * enlarge it; the pages then scroll sideways, and are drawn again at the new size. The browser's own pinch zoom
 * stays allowed (the viewport meta does not restrict scaling, and nothing sets touch-action).
 */
export function zoomControls(pages) {
  let index = 0;
  const level = h('output', { class: 'zoom__level', 'aria-live': 'polite' }, t('summary.zoom_level', { percent: 100 }));
  const out = h(
    'button',
    { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': t('summary.zoom_out') },
    '−',
  );
  const into = h(
    'button',
    { type: 'button', class: 'button button--secondary zoom__button', 'aria-label': t('summary.zoom_in') },
    '+',
  );
  const set = (next) => {
    index = Math.max(0, Math.min(ZOOMS.length - 1, next));
    pages.style.setProperty('--zoom', String(ZOOMS[index]));
    pages.dataset.zoom = String(ZOOMS[index]);
    // Zoomed, the list scrolls sideways: keyboard users reach it with Tab and scroll it with the arrow keys.
    if (index > 0) pages.setAttribute('tabindex', '0');
    else pages.removeAttribute('tabindex');
    level.textContent = t('summary.zoom_level', { percent: Math.round(ZOOMS[index] * 100) });
    out.setAttribute('aria-disabled', String(index === 0));
    into.setAttribute('aria-disabled', String(index === ZOOMS.length - 1));
    pages.redraw?.();
  };
  out.addEventListener('click', () => set(index - 1));
  into.addEventListener('click', () => set(index + 1));
  out.setAttribute('aria-disabled', 'true');
  return h('div', { class: 'zoom', role: 'group', 'aria-label': t('summary.zoom_label') }, out, level, into);
}
