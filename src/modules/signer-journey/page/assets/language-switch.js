// The header's language switch: every language the page speaks, each named in itself. The choice is kept on the
// signer (POST /signer-api/language): the page opens in it next time, and the messages still to come use it.

import { postJson } from './api.js';
import { announce, h } from './dom.js';
import { currentLanguage, languages, t, useLanguage } from './i18n.js';

/**
 * Speaks `language` now and keeps it for the signer; `rerender` then draws the screen again in it. A language the
 * page does not speak is refused (false); a choice the service could not keep still applies to this visit.
 */
export async function switchLanguage(language, rerender) {
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
  announce(kept ? t('language.changed') : t('language.change_failed'), { assertive: !kept });
  return true;
}

/** Draws the switch in the header, for the language spoken now. */
export function renderLanguageSwitch(rerender) {
  const slot = document.getElementById('language-switch');
  if (!slot) return;
  const select = h(
    'select',
    { id: 'language-select', class: 'language-switch__select', dataset: { languageSwitch: '' } },
    languages().map(({ tag, native }) => h('option', { value: tag, lang: tag, selected: tag === currentLanguage() }, native)),
  );
  select.addEventListener('change', () => {
    select.disabled = true;
    switchLanguage(select.value, rerender).finally(() => {
      select.disabled = false;
    });
  });
  // Named in the language spoken now, and in English too: a signer who cannot read the page's language finds it.
  const label = h(
    'label',
    { for: 'language-select', class: 'language-switch__label' },
    t('language.label'),
    currentLanguage() === 'en' ? null : h('span', { lang: 'en' }, ' / Language'),
  );
  slot.replaceChildren(label, select);
  slot.hidden = false;
}
