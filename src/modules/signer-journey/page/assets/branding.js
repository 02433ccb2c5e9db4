// The page's brand: the session's company (or this platform's name), its legal entity, and who to ask.

import { h } from './dom.js';
import { t, tParts } from './i18n.js';

export const PLATFORM_NAME = document.querySelector('meta[name="platform-name"]').content;

export function brandOf(session) {
  const overrides = session?.email_template_overrides ?? {};
  return {
    name: overrides.company_name || PLATFORM_NAME,
    legal: overrides.legal_name || null,
    support: overrides.support_email || null,
  };
}

/** Who asks: the session's sender, else the company (or legal entity) it is branded with. */
export function requesterOf(session) {
  const overrides = session?.email_template_overrides ?? {};
  return session?.sender || overrides.company_name || overrides.legal_name || null;
}

export function applyBranding(session) {
  const brand = brandOf(session);
  document.getElementById('brand').textContent = brand.name;
  const legal = document.getElementById('brand-legal');
  legal.textContent = brand.legal ?? '';
  legal.hidden = !brand.legal;
  const support = document.getElementById('support');
  if (brand.support) {
    support.replaceChildren(
      ...tParts(
        'branding.support_email',
        { email: brand.support },
        {
          link: (children) => h('a', { href: `mailto:${brand.support}` }, children),
        },
      ),
    );
  } else {
    const who = requesterOf(session);
    support.textContent = t('branding.support', { who: who ? 'named' : 'other', requester: who ?? '' });
  }
}
