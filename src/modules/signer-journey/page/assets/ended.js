// What the page says once there is nothing to sign: the signer (or everyone) has signed, or the request is closed
// (cancelled, declined, expired, a failed signer). Each function returns the options of signer.js's message screen.

import { describeError, getDocument, sentence } from './api.js';
import { announce, formatDateTime, h } from './dom.js';
import { requesterOf } from './branding.js';

const quoted = (filename) => `“${filename}”`;

/** A download of one document (`position`) of the session: the signed PDF once complete, else as it stands. */
function downloadButton(session, { position = 0, name = session.filename, several = false } = {}) {
  const error = h('p', { class: 'action-error', hidden: true });
  const what = several ? `“${name}”` : 'the document';
  const button = h(
    'button',
    { type: 'button', class: 'button button--primary', dataset: { document: String(position) } },
    session.status === 'completed' ? `Download ${several ? what : 'the signed document'}` : `Download ${what}`,
  );
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
      announce('The download has started.');
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

const pdfName = (filename) => (/\.pdf$/i.test(filename || '') ? filename : `${filename || 'document'}.pdf`);

export function finishedMessage(view) {
  const { session, signer, whose_turn: turn } = view;
  const mine = signer.status === 'completed';
  const paragraphs = [];
  const several = Array.isArray(session.documents) && session.documents.length > 1;
  if (session.status === 'completed')
    paragraphs.push(
      several ? 'Everyone has signed. The documents are complete.' : 'Everyone has signed. The document is complete.',
    );
  else if (turn) paragraphs.push(`It is now ${turn.full_name}’s turn to sign.`);
  if (session.allow_download)
    paragraphs.push(several ? 'You can download a copy of each document.' : 'You can download a copy of the document.');
  else paragraphs.push('You can close this page.');
  return {
    screenName: 'done',
    tone: 'success',
    title: mine ? `You have signed ${quoted(session.filename)}` : `${quoted(session.filename)} is signed`,
    paragraphs,
    actions: session.allow_download ? downloadButtons(session) : [],
  };
}

export function closedMessage(view) {
  const { session, signer } = view;
  const who = requesterOf(session) ?? 'the sender';
  if (session.status === 'cancelled') {
    return {
      screenName: 'cancelled',
      tone: 'problem',
      title: 'This signing request was cancelled',
      paragraphs: [
        `${requesterOf(session) ?? 'The sender'} cancelled the request to sign ${quoted(session.filename)}. There is nothing more to do here.`,
      ],
    };
  }
  if (session.status === 'declined') {
    const mine = signer.status === 'declined';
    return {
      screenName: 'declined',
      tone: mine ? 'info' : 'problem',
      title: mine ? `You declined to sign ${quoted(session.filename)}` : 'This signing request has ended',
      paragraphs: mine
        ? [
            `${who === 'the sender' ? 'The sender has' : `${who} has`} been told, with your reason: “${signer.decline_reason}”.`,
            'You can close this page.',
          ]
        : [
            `${session.declined_by ?? 'Another signer'} declined to sign ${quoted(session.filename)}, so nobody can sign it any more.`,
          ],
    };
  }
  if (session.status === 'expired') {
    return {
      screenName: 'expired',
      tone: 'problem',
      title: 'This signing link has expired',
      paragraphs: [
        `The time to sign ${quoted(session.filename)} ran out${session.expires_at ? ` on ${formatDateTime(session.expires_at)}` : ''}.`,
        `Ask ${who} to send you a new request.`,
      ],
    };
  }
  return {
    screenName: 'failed',
    tone: 'problem',
    title: 'You can no longer sign this document',
    paragraphs: [
      signer.status === 'failed'
        ? 'Signing did not succeed after too many attempts, so this link is closed.'
        : 'This link can no longer be used to sign.',
      signer.status === 'failed' && signer.esp_transaction?.error_message
        ? `The eSign Service Provider’s last answer: ${sentence(signer.esp_transaction.error_message)}`
        : null,
      `Contact ${who} if you still need to sign ${quoted(session.filename)}.`,
    ],
  };
}
