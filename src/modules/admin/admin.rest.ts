import type { RestRoute } from '../../platform/rest/route';

/** Added by this service (the contract has no operator API); admin tokens only, a user token gets `403 forbidden`. */
export const adminRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/admin/wallet/credit',
    operation: 'Mutation.adminCreditWallet',
    summary:
      "Adds `amount` rupees to a user's wallet (`user_id`, `description`); answers the ledger entry and balance (added by this service).",
  },
  {
    method: 'POST',
    path: '/admin/wallet/debit',
    operation: 'Mutation.adminDebitWallet',
    summary: "Takes `amount` rupees from a user's wallet; `402 insufficient_balance` beyond the balance (added by this service).",
  },
  {
    method: 'GET',
    path: '/admin/wallet/ledger',
    operation: 'Query.adminWalletLedger',
    summary: "A user's balance and ledger (`user_id`), newest first, `page` from 1, `size` 1 to 100 (added by this service).",
  },
  {
    method: 'POST',
    path: '/admin/users/stamp-fee',
    operation: 'Mutation.adminSetStampFee',
    summary:
      "Sets a user's fee per stamp (`user_id`, `fee` in rupees); `fee` null or left out: the default (added by this service).",
  },
  {
    method: 'GET',
    path: '/admin/users/details',
    operation: 'Query.adminUser',
    summary: "A user's email, balance and fee per stamp (`user_id`) (added by this service).",
  },
  {
    method: 'GET',
    path: '/admin/audit-trail',
    operation: 'Query.adminAuditTrail',
    summary: "Admin and operator changes to a user's account (`user_id`), newest first, paged (added by this service).",
  },
  {
    method: 'GET',
    path: '/admin/esps',
    operation: 'Query.adminEspHealth',
    summary:
      'Every configured eSign Service Provider with its health as failover records it (state, failures, skipped_until) (added by this service).',
  },
];
