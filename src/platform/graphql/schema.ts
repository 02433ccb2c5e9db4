import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { FileResolver } from '../../modules/files/file.resolver';
import { UserResolver } from '../../modules/users/user.resolver';
import { ElementResolver, EsignSessionResolver } from '../../modules/esign/session.resolver';
import { TemplateResolver } from '../../modules/templates/template.resolver';
import { StampInstanceResolver, StampOrderCountsResolver, StampOrderResolver } from '../../modules/stamps/stamp.resolver';
import { WalletResolver } from '../../modules/wallet/wallet.resolver';
import { PfxResolver } from '../../modules/pfx/pfx.resolver';
import { SignatureVerificationResolver } from '../../modules/signing/verify.resolver';
import { AuditResolver } from '../../modules/audit/audit.resolver';
import { NotificationResolver } from '../../modules/notifications/notification.resolver';
import { depthLimitRule } from './depth-limit';

export const resolvers = [
  UserResolver,
  FileResolver,
  EsignSessionResolver,
  ElementResolver,
  TemplateResolver,
  StampOrderResolver,
  StampOrderCountsResolver,
  StampInstanceResolver,
  WalletResolver,
  PfxResolver,
  SignatureVerificationResolver,
  AuditResolver,
  NotificationResolver,
] as const;

let cached: Promise<GraphQLSchema> | undefined;

/**
 * Every subscription brings its own `subscribe` (access check, then the request's EventBus), so the
 * schema-wide PubSub that TypeGraphQL insists on must never be reached.
 */
const unusedPubSub = {
  publish: () => {
    throw new Error('publish through services.events (EventBus), not the schema PubSub');
  },
  subscribe: () => {
    throw new Error('subscriptions must declare their own subscribe');
  },
};

/** The one schema both faces serve; built once per process. */
export function buildAppSchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({ resolvers, validate: false, emitSchemaFile: false, pubSub: unusedPubSub });
  return cached;
}

export const validationRules = [depthLimitRule(12)];
