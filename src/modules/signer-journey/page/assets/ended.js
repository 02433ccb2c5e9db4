// What the page says once there is nothing to sign: the signer (or everyone) has signed, or the request is closed
// (cancelled, declined, expired, a failed signer). Each function returns the options of signer.js's message screen.

import { describeError, getDocument, sentence } from './api.js';
import { announce, formatDateTime, h } from './dom.js';
import { requesterOf } from './branding.js';
import { t } from './i18n.js';

/** `who` and `requester` for a message that names the sender when the session does ("The sender" otherwise). */
const senderOf = (session) => {
  const requester = requesterOf(session);
  return { who: requester ? 'named' : 'other', requester: requester ?? '' };
};

/** A download of one document (`position`) of the session: the signed PDF once complete, else as it stands. */
function downloadButton(session, { position = 0, name = session.filename, several = false } = {}) {
  const error = h('p', { class: 'action-error', hidden: true });
  const label = several
    ? t('ended.download_named', { name })
    : session.status === 'completed'
      ? t('ended.download_signed')
      : t('ended.download_document');
  const button = h('button', { type: 'button', class: 'button button--primary', dataset: { document: String(position) } }, label);
  button.addEventListener('click', async () => {
    error.hidden = true;
    try {
      const bytes = await getDocument(position);
      const url = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
      const link = h('a', { href: url, download: pdfName(name), hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      announce(t('ended.download_started'));
    } catch (failure) {
      error.textContent = describeError(failure);
      error.hidden = false;
      announce(error.textContent, { assertive: true });
    }
  });
  return h('div', { class: 'download' }, button, error);
}

/** One download per document of the session (one button for a single document, as before envelopes). */
function downloadButtons(session) {
  const documents = Array.isArray(session.documents) ? session.documents : [];
  if (documents.length < 2) return [downloadButton(session)];
  return documents.map((document) =>
    downloadButton(session, { position: document.position, name: document.name, several: true }),
  );
}

const pdfName = (filename) => (/\.pdf$/i.test(filename || '') ? filename : `${filename || t('ended.default_filename')}.pdf`);

export function finishedMessage(view) {
  const { session, signer, whose_turn: turn } = view;
  const mine = signer.status === 'completed';
  const paragraphs = [];
  const count = Array.isArray(session.documents) && session.documents.length > 1 ? session.documents.length : 1;
  if (session.status === 'completed') paragraphs.push(t('ended.everyone_signed', { count }));
  else if (turn) paragraphs.push(t('ended.next_turn', { name: turn.full_name }));
  if (session.allow_download) paragraphs.push(t('ended.can_download', { count }));
  else paragraphs.push(t('ended.can_close'));
  return {
    screenName: 'done',
    tone: 'success',
    title: mine
      ? t('ended.signed_title_mine', { filename: session.filename })
      : t('ended.signed_title', { filename: session.filename }),
    paragraphs,
    actions: session.allow_download ? downloadButtons(session) : [],
  };
}

export function closedMessage(view) {
  const { session, signer } = view;
  const sender = senderOf(session);
  const filename = session.filename;
  if (session.status === 'cancelled') {
    return {
      screenName: 'cancelled',
      tone: 'problem',
      title: t('ended.cancelled_title'),
      paragraphs: [t('ended.cancelled_text', { ...sender, filename })],
    };
  }
  if (session.status === 'declined') {
    const mine = signer.status === 'declined';
    return {
      screenName: 'declined',
      tone: mine ? 'info' : 'problem',
      title: mine ? t('ended.declined_title_mine', { filename }) : t('ended.declined_title'),
      paragraphs: mine
        ? [t('ended.declined_told', { ...sender, reason: signer.decline_reason ?? '' }), t('ended.can_close')]
        : [
            t('ended.declined_by', {
              who: session.declined_by ? 'named' : 'other',
              name: session.declined_by ?? '',
              filename,
            }),
          ],
    };
  }
  if (session.status === 'expired') {
    return {
      screenName: 'expired',
      tone: 'problem',
      title: t('ended.expired_title'),
      paragraphs: [
        session.expires_at
          ? t('ended.expired_on', { filename, expires: formatDateTime(session.expires_at) })
          : t('ended.expired', { filename }),
        t('ended.ask_new_request', sender),
      ],
    };
  }
  return {
    screenName: 'failed',
    tone: 'problem',
    title: t('ended.failed_title'),
    paragraphs: [
      signer.status === 'failed' ? t('ended.failed_attempts') : t('ended.failed_closed'),
      signer.status === 'failed' && signer.esp_transaction?.error_message
        ? t('ended.esp_last_answer', { answer: sentence(signer.esp_transaction.error_message) })
        : null,
      t('ended.failed_contact', { ...sender, filename }),
    ],
  };
}
