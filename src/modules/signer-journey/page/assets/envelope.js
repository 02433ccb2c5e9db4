// The envelope on the page: a session may hold several documents (a sanction letter, an agreement, a schedule). The
// signer reads them one after another: a list names each (with whether they sign it), a count says where they are
// and how many they have opened, and Previous / Next move along. One document's pages are on screen at a time.

import { ApiError, describeError, getDocument } from './api.js';
import { announce, h } from './dom.js';
import { showDocument } from './document-view.js';
import { t } from './i18n.js';
import { pagesText } from './summary.js';

/** The documents of the session (an older view without the list: its one document). */
export function documentsOf(view) {
  const documents = Array.isArray(view.session.documents) ? view.session.documents : [];
  return documents.length ? documents : [{ position: 0, name: view.session.filename, signed_by_you: true }];
}

const onDocument = (items, position) => items.filter((item) => (item.document ?? 0) === position);

/**
 * The document pane's content for `view`: `navigation` (null for a single document) and `show(position)`, which
 * loads that document's pages into `pages` with the signer's boxes on it. `hint` says where the signature goes in
 * the document shown; `docStatus` how loading goes.
 */
export function envelopeViewer(view, { pages, docStatus, hint, documentSection, onBoxChosen }) {
  const documents = documentsOf(view);
  const fields = Array.isArray(view.signer.fields) ? view.signer.fields : [];
  const form = Array.isArray(view.signer.form) ? view.signer.form : [];
  const opened = new Set();
  let shown = null;
  const navigation = documents.length > 1 ? navigatorOf(documents, (position) => show(position, { announceIt: true })) : null;

  function show(position, { announceIt = false } = {}) {
    shown = position;
    opened.add(position);
    navigation?.update(position, opened);
    const mine = onDocument(fields, position);
    hint.textContent = pagesText(mine);
    docStatus.hidden = false;
    docStatus.classList.remove('action-error');
    docStatus.textContent = t('envelope.loading');
    const superseded = () => shown !== position;
    const current = documents.find((document) => document.position === position);
    if (announceIt && current)
      announce(t('envelope.showing', { name: current.name, position: position + 1, count: documents.length }));
    getDocument(position)
      .then((bytes) =>
        superseded()
          ? null
          : showDocument(pages, bytes, mine, {
              form: onDocument(form, position),
              onBoxChosen,
              superseded,
              onRendered: (rendered, count) => {
                if (rendered === count && !superseded()) docStatus.hidden = true;
              },
            }),
      )
      .then((count) => {
        if (count === null || superseded()) return;
        docStatus.textContent = t('envelope.page_count', { count });
        documentSection.dataset.pages = String(count);
        documentSection.dataset.document = String(position);
      })
      .catch((failure) => {
        if (superseded()) return;
        docStatus.textContent =
          failure instanceof ApiError
            ? t('envelope.not_shown_because', { reason: describeError(failure) })
            : t('envelope.not_shown');
        docStatus.classList.add('action-error');
      });
  }

  return { navigation: navigation?.element ?? null, show };
}

/** The list of documents, the count, and Previous / Next; `update` marks the one shown and those opened. */
function navigatorOf(documents, choose) {
  const count = h('p', { class: 'envelope__count', 'aria-live': 'polite' });
  const opened = h('p', { class: 'hint envelope__opened' });
  const buttons = documents.map((document) =>
    h(
      'button',
      {
        type: 'button',
        class: 'envelope__item',
        dataset: { document: String(document.position) },
        on: { click: () => choose(document.position) },
      },
      h('span', { class: 'envelope__number' }, `${document.position + 1}.`),
      h('span', { class: 'envelope__name' }, document.name),
      h('span', { class: 'envelope__role' }, document.signed_by_you ? t('envelope.you_sign_this') : t('envelope.to_read')),
    ),
  );
  const previous = h('button', { type: 'button', class: 'button button--secondary' }, t('envelope.previous'));
  const next = h('button', { type: 'button', class: 'button button--secondary' }, t('envelope.next'));
  let at = 0;
  previous.addEventListener('click', () => at > 0 && choose(at - 1));
  next.addEventListener('click', () => at < documents.length - 1 && choose(at + 1));
  const signs = documents.filter((document) => document.signed_by_you).length;
  const element = h(
    'nav',
    { class: 'envelope', 'aria-label': t('envelope.nav_label') },
    h(
      'p',
      { class: 'envelope__intro' },
      signs === documents.length
        ? t('envelope.intro_all', { count: documents.length })
        : t('envelope.intro_some', { count: documents.length, signs }),
    ),
    count,
    h(
      'ol',
      { class: 'envelope__list' },
      buttons.map((button) => h('li', {}, button)),
    ),
    opened,
    h('div', { class: 'envelope__moves' }, previous, next),
  );
  const update = (position, seen) => {
    at = position;
    const current = documents.find((document) => document.position === position);
    count.textContent = t('envelope.position', { position: position + 1, count: documents.length, name: current?.name ?? '' });
    opened.textContent = t('envelope.opened', { opened: seen.size, count: documents.length });
    for (const button of buttons) {
      const here = button.dataset.document === String(position);
      if (here) button.setAttribute('aria-current', 'true');
      else button.removeAttribute('aria-current');
      button.classList.toggle('envelope__item--opened', seen.has(Number(button.dataset.document)));
    }
    previous.setAttribute('aria-disabled', String(position === 0));
    next.setAttribute('aria-disabled', String(position === documents.length - 1));
  };
  return { element, update };
}
