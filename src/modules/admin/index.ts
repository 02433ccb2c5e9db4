/**
 * admin: the operations an admin-scope access token (issued by the CLI) may perform on any user's account: credit
 * and debit a wallet, read a ledger and a user, set a user's fee per stamp, read the account's audit trail. Each
 * use case checks the scope first (platform/auth/require-admin.ts); the rules stay with the modules that own the
 * data (the ledger's in wallet, the fee's in users, the trail's in audit).
 */
import type { ModuleManifest } from '../../platform/module';
import { AdminResolver } from './admin.resolver';
import { adminRestRoutes } from './admin.rest';

export const adminModule: ModuleManifest = {
  name: 'admin',
  resolvers: [AdminResolver],
  restRoutes: adminRestRoutes,
};
