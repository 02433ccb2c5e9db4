// The signing page inside an integrator's iframe (docs/embedding.md): it tells the host what happens with
// postMessage, and takes a few commands from it. Messages go only to the origins the session's owner allows (the
// page's CSP lets only those frame it); commands are taken only from the parent window at one of those origins.

export const EMBED_SCHEMA_VERSION = 1;
const SOURCE = 'esign-estamp';
const HOST_SOURCE = 'esign-estamp-host';

/** True when another window frames this page. */
export const embedded = window.parent !== window;

let origins = [];
let last = null;
let onCommand = () => undefined;
let onLanguage = async () => false;

/** Sends one event to the host, at whichever allowed origin it is (the browser delivers only to the matching one). */
export function emit(event, data = {}) {
  if (!embedded) return;
  const message = { source: SOURCE, version: EMBED_SCHEMA_VERSION, event, data };
  for (const origin of origins) window.parent.postMessage(message, origin);
}

/**
 * Each time the page reads the session: `ready` the first time, then `signed`, `declined` and `completed` as the
 * signer's and the session's status move there while the page is open.
 */
export function observe(view) {
  origins = Array.isArray(view.session.embed_origins) ? view.session.embed_origins : [];
  const now = { signer: view.signer.status, session: view.session.status };
  const ids = { session_id: view.session.client_id, signer_id: view.signer.signer_id };
  if (!last) {
    emit('ready', { ...ids, session_status: now.session, signer_status: now.signer, sign_type: view.signer.sign_type });
  } else {
    if (last.signer !== 'completed' && now.signer === 'completed') emit('signed', { ...ids, session_status: now.session });
    if (last.signer !== 'declined' && now.signer === 'declined') emit('declined', ids);
    if (last.session !== 'completed' && now.session === 'completed') emit('completed', ids);
  }
  last = now;
}

/** The host's commands: `hide-header` (true or false), `set-language` (a language tag the page speaks). */
export function listenForCommands(handler) {
  onCommand = handler;
}

/** `set-language`: `handler(tag)` switches the page and answers false for a language it does not speak. */
export function listenForLanguage(handler) {
  onLanguage = handler;
}

window.addEventListener('message', (event) => {
  if (event.source !== window.parent || !origins.includes(event.origin)) return;
  const message = event.data;
  if (!message || message.source !== HOST_SOURCE || typeof message.command !== 'string') return;
  if (message.command === 'hide-header') {
    document.body.classList.toggle('embed--no-header', message.value !== false);
    return;
  }
  if (message.command === 'set-language') {
    const language = typeof message.value === 'string' ? message.value.trim().toLowerCase() : '';
    onLanguage(language).then((switched) => {
      if (switched) emit('language', { language });
      else
        emit('error', {
          code: 'unsupported_language',
          message: `The page does not speak ${String(message.value)}; it speaks en, hi, bn, mr, te, ta, gu, kn and ml.`,
        });
    });
    return;
  }
  if (!onCommand(message)) emit('error', { code: 'unknown_command', message: `Unknown command ${message.command}.` });
});
