/** wallet: each user's balance in paise and its ledger; every charge, refund, credit and debit is one ledger row. */
import type { ModuleManifest } from '../../platform/module';
import { Wallet, WalletEntry } from './wallet.entity';
import { WalletResolver } from './wallet.resolver';
import { walletRestRoutes } from './wallet.rest';

export { adjustWallet, creditWallet, type LedgerResult, type WalletAdjustment } from './credit-wallet';
export { applyLedgerChange, chargeOrRefund, type LedgerChange } from './ledger';
export { listLedger, walletBalance } from './read-wallet';
export { WalletEntry } from './wallet.entity';
export { toWalletEntryView, WalletEntryType } from './wallet.resolver';

export const walletModule: ModuleManifest = {
  name: 'wallet',
  entities: [Wallet, WalletEntry],
  resolvers: [WalletResolver],
  restRoutes: walletRestRoutes,
};
