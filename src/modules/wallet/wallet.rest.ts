import type { RestRoute } from '../../platform/rest/route';

export const walletRestRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/wallet',
    operation: 'Query.wallet',
    summary: 'Wallet balance and the latest ledger entries (added by this service).',
  },
  {
    method: 'GET',
    path: '/wallet/ledger',
    operation: 'Query.walletLedger',
    summary: 'The wallet ledger, newest first, `page` from 1, `size` 1 to 100 (added by this service).',
  },
];
