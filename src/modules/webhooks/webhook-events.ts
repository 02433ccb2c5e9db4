/** The events an endpoint can subscribe to (or `*` for all), and what `data` each carries. */
export const WEBHOOK_EVENT_TYPES = {
  'esign.session.created': 'a session was initialized; data: the session as GET esign/details shows it',
  'esign.signer.viewed': 'a signer opened the signing page; data: the session',
  'esign.signer.signed': 'a signer signed; data: the session',
  'esign.signer.failed': 'a signer used up their attempts (OTP or face check); data: the session',
  'esign.signer.reassigned':
    'the owner handed a pending signer’s place to another person (reassign-signer); data: the session, with the signer’s new invite_url, and `signer_id`',
  'esign.signer.delegated':
    'a signer handed their place to a delegate (delegation); data: the session, with the delegate’s invite_url, and `signer_id`',
  'esign.signer.reminded': 'a reminder went to a signer whose turn it is; data: the session, and `signer_id`',
  'esign.session.completed': 'the last signer signed; data: the session',
  'esign.session.expired': 'the session expired unsigned; data: the session',
  'esign.session.cancelled': 'the owner cancelled the session; data: the session',
  'esign.session.declined':
    'a signer declined to sign (with a reason), which ends the session; data: the session, and `signer_id`',
  'esign.direct_link.used':
    'someone started a session from a template’s public link; data: the session, `direct_link_id` and the visitor’s `signer_id`',
  'esign.bulk.created': 'a bulk send was accepted; data: the bulk as GET esign/bulk-status shows it',
  'esign.bulk.progress': 'rows of a bulk were made into sessions (at most one every 5 s per bulk); data: the bulk',
  'esign.bulk.completed': 'every row of a bulk is made into a session or failed; data: the bulk',
  'esign.bulk.cancelled': 'the owner cancelled a bulk; data: the bulk',
  'stamp.order.created': 'a stamp order was created; data: the order as GET stamps/order-status shows it',
  'stamp.order.progress': 'stamps of the order were procured or rejected (at most one every 5 s per order); data: the order',
  'stamp.order.completed': 'every stamp of the order is procured or rejected; data: the order',
  'wallet.charged': 'the wallet was charged; data: the ledger entry as GET wallet/ledger lists it',
  'wallet.refunded': 'money went back to the wallet; data: the ledger entry',
  'wallet.credited': 'an admin credited the wallet; data: the ledger entry',
  'wallet.debited': 'an admin debited the wallet; data: the ledger entry',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

/** Sent by `webhooks/test` to that endpoint alone, whatever it subscribes to. */
export const PING_EVENT = 'ping';

export function subscribes(events: readonly string[], type: string): boolean {
  return type === PING_EVENT ? false : events.includes('*') || events.includes(type);
}
