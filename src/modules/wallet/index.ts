/** wallet: each user's balance in paise and its ledger; every charge and refund is one ledger row. */
import type { ModuleManifest } from '../../platform/module';
import { Wallet, WalletEntry } from './wallet.entity';
import { WalletResolver } from './wallet.resolver';
import { walletRestRoutes } from './wallet.rest';

export { creditWallet, type LedgerResult } from './credit-wallet';
export { applyLedgerChange, chargeOrRefund, type LedgerChange } from './ledger';

export const walletModule: ModuleManifest = {
  name: 'wallet',
  entities: [Wallet, WalletEntry],
  resolvers: [WalletResolver],
  restRoutes: walletRestRoutes,
};
