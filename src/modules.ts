/**
 * The composition root: every module's manifest, in one place. Entries (main, worker, CLI, tests and
 * benchmarks) start the platform with this composition; platform code never imports a module. Composing also
 * fills the slots modules declare with what other modules provide (the sandbox's stand-ins for signing and stamps).
 */
import { auditModule } from './modules/audit';
import { bulkModule } from './modules/bulk';
import { directLinksModule } from './modules/direct-links';
import { esignModule } from './modules/esign';
import { filesModule } from './modules/files';
import { notificationsModule } from './modules/notifications';
import { pfxModule } from './modules/pfx';
import { sandboxModule } from './modules/sandbox';
import { signerJourneyModule } from './modules/signer-journey';
import { signingModule } from './modules/signing';
import { stampsModule } from './modules/stamps';
import { templatesModule } from './modules/templates';
import { tokensModule } from './modules/tokens';
import { accessTokenVerifier, usersModule } from './modules/users';
import { walletModule } from './modules/wallet';
import { webhooksModule } from './modules/webhooks';
// Imported after the modules it uses: TypeGraphQL lists types in the order their classes load, so schema.graphql
// keeps the others' order and adds the admin operations at the end.
import { adminModule } from './modules/admin';
import { compose } from './platform/module';
import { RateLimitCounter } from './platform/rate-limit/rate-limit-counter.entity';

/** In the order their types, fields and REST routes are listed (schema.graphql, the OpenAPI document). */
export const modules = [
  usersModule,
  filesModule,
  esignModule,
  templatesModule,
  bulkModule,
  directLinksModule,
  stampsModule,
  walletModule,
  pfxModule,
  signingModule,
  sandboxModule,
  signerJourneyModule,
  notificationsModule,
  auditModule,
  webhooksModule,
  tokensModule,
  adminModule,
];

export const composition = compose(modules, { entities: [RateLimitCounter], tokens: accessTokenVerifier });
