// The header's language switch: a button naming the language spoken now, opening the list of every language the page
// speaks, each named in itself. A list rather than a <select>: a browser lays out every option of a select, and so
// would fetch every script's font for every signer; the list's names are drawn (and their fonts fetched) only when
// the signer opens it. The choice is kept on the signer (POST /signer-api/language): the page opens in it next time,
// and the messages still to come use it.

import { postJson } from './api.js';
import { announce, h } from './dom.js';
import { currentLanguage, languages, t, useLanguage } from './i18n.js';

/**
 * Speaks `language` now and keeps it for the signer; `rerender` then draws the screen again in it. A language the
 * page does not speak is refused (false); a choice the service could not keep still applies to this visit.
 */
export async function switchLanguage(language, rerender, { fromSwitch = false } = {}) {
  if (!languages().some((entry) => entry.tag === language)) return false;
  if (language !== currentLanguage()) await useLanguage(language);
  let kept = true;
  try {
    await postJson('/language', { language });
  } catch {
    kept = false;
  }
  await rerender();
  renderLanguageSwitch(rerender);
  // The signer's focus goes back to the switch they used (the redraw focused the title).
  if (fromSwitch) document.getElementById('language-toggle')?.focus();
  announce(kept ? t('language.changed') : t('language.change_failed'), { assertive: !kept });
  return true;
}

/** Draws the switch in the header, for the language spoken now. */
export function renderLanguageSwitch(rerender) {
  const slot = document.getElementById('language-switch');
  if (!slot) return;
  const now = languages().find((entry) => entry.tag === currentLanguage());
  const toggle = h(
    'button',
    {
      type: 'button',
      id: 'language-toggle',
      class: 'language-switch__toggle',
      'aria-expanded': 'false',
      'aria-controls': 'language-list',
    },
    // Named in the language spoken now, and in English too: a signer who cannot read the page's language finds it.
    t('language.label'),
    currentLanguage() === 'en' ? null : h('span', { lang: 'en' }, ' / Language'),
    ': ',
    h('span', { lang: now?.tag ?? 'en' }, now?.native ?? 'English'),
  );
  const list = h(
    'ul',
    { id: 'language-list', class: 'language-switch__list', hidden: true },
    languages().map(({ tag, native, english }) =>
      h(
        'li',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'language-switch__choice',
            lang: tag,
            dataset: { language: tag },
            'aria-current': tag === currentLanguage() ? 'true' : null,
            // The English name too, for a screen reader that cannot speak the script.
            'aria-label': tag === 'en' ? null : `${native} (${english})`,
          },
          native,
        ),
      ),
    ),
  );
  const setOpen = (open) => {
    list.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
  };
  toggle.addEventListener('click', () => {
    setOpen(list.hidden);
    if (!list.hidden) list.querySelector('[aria-current="true"]')?.focus();
  });
  list.addEventListener('click', (event) => {
    const choice = event.target.closest('[data-language]');
    if (!choice) return;
    setOpen(false);
    toggle.disabled = true;
    switchLanguage(choice.dataset.language, rerender, { fromSwitch: true }).finally(() => {
      toggle.disabled = false;
    });
  });
  // Listeners on an element drawn anew with the switch (the slot stays across languages).
  const inner = h('div', { class: 'language-switch__inner' }, toggle, list);
  inner.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || list.hidden) return;
    setOpen(false);
    toggle.focus();
  });
  inner.addEventListener('focusout', (event) => {
    if (!inner.contains(event.relatedTarget)) setOpen(false);
  });
  slot.replaceChildren(inner);
  slot.hidden = false;
}
