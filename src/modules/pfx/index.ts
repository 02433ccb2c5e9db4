/** pfx: PKCS#12 credentials a user uploads to sign with, kept sealed; opened only to sign. */
import type { ModuleManifest } from '../../platform/module';
import { PfxCredential } from './pfx-credential.entity';
import { PfxResolver } from './pfx.resolver';
import { pfxRestRoutes } from './pfx.rest';

export { openPfxCredential } from './manage-pfx';
export { PfxCredential } from './pfx-credential.entity';

export const pfxModule: ModuleManifest = {
  name: 'pfx',
  entities: [PfxCredential],
  resolvers: [PfxResolver],
  restRoutes: pfxRestRoutes,
};
