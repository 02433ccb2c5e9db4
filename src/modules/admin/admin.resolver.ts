import { Arg, Args, ArgsType, Ctx, Field, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { PageArgs } from '../../platform/graphql/paging';
import { RupeesScalar } from '../../platform/graphql/rupees';
import { adjustAnyWallet } from './adjust-any-wallet';
import {
  AccountAuditPageType,
  AdminUserType,
  AdminWalletChangeType,
  AdminWalletLedgerType,
  EspHealthType,
  StampFeeType,
} from './admin.types';
import { readEspHealth } from './read-esp-health';
import { readAccountTrail, readAnyLedger, readAnyUser } from './read-accounts';
import { setUserStampFee } from './set-user-stamp-fee';

// Arguments are nullable and checked by the use cases, after the admin check: a missing one is
// `missing_fields` naming it, on both faces, and a user token learns nothing from its arguments.

@ArgsType()
class AdjustWalletArgs {
  @Field(() => String, { nullable: true, description: 'The user whose wallet changes.' }) user_id?: string | null;
  @Field(() => RupeesScalar, { nullable: true, description: 'Rupees greater than 0, at most 2 decimals.' })
  amount?: string | number | null;
  @Field(() => String, { nullable: true, description: 'Why (required, at most 500 characters); shown in the ledger.' })
  description?: string | null;
}

@ArgsType()
class UserPageArgs extends PageArgs {
  @Field(() => String, { nullable: true }) user_id?: string | null;
}

const ADMIN_ONLY = 'Admin tokens only (a user token: `forbidden`).';

@Resolver()
export class AdminResolver {
  @TokenScope('account')
  @Mutation(() => AdminWalletChangeType, { description: `Adds money to any user's wallet. ${ADMIN_ONLY}` })
  adminCreditWallet(@Args() args: AdjustWalletArgs, @Ctx() ctx: RequestContext): Promise<AdminWalletChangeType> {
    return adjustAnyWallet(ctx.services, ctx.em, ctx.actor, 'credit', args, ctx.origin);
  }

  @TokenScope('account')
  @Mutation(() => AdminWalletChangeType, {
    description: `Takes money from any user's wallet; never below zero (\`insufficient_balance\`). ${ADMIN_ONLY}`,
  })
  adminDebitWallet(@Args() args: AdjustWalletArgs, @Ctx() ctx: RequestContext): Promise<AdminWalletChangeType> {
    return adjustAnyWallet(ctx.services, ctx.em, ctx.actor, 'debit', args, ctx.origin);
  }

  @TokenScope('account')
  @Query(() => AdminWalletLedgerType, { description: `Any user's balance and ledger, newest first. ${ADMIN_ONLY}` })
  adminWalletLedger(@Args() args: UserPageArgs, @Ctx() ctx: RequestContext): Promise<AdminWalletLedgerType> {
    return readAnyLedger(ctx.em, ctx.actor, args);
  }

  @TokenScope('account')
  @Mutation(() => StampFeeType, {
    description: `Sets a user's own fee per stamp; \`fee\` null (or left out) returns them to the default. ${ADMIN_ONLY}`,
  })
  adminSetStampFee(
    @Arg('user_id', () => String, { nullable: true }) userId: string | null,
    @Arg('fee', () => RupeesScalar, { nullable: true, description: 'Rupees, 0 to 9999999.99; null: the default.' })
    fee: string | number | null,
    @Ctx() ctx: RequestContext,
  ): Promise<StampFeeType> {
    return setUserStampFee(ctx.services, ctx.em, ctx.actor, { user_id: userId, fee }, ctx.origin);
  }

  @TokenScope('account')
  @Query(() => AdminUserType, { description: `A user's email, balance and fee per stamp. ${ADMIN_ONLY}` })
  adminUser(
    @Arg('user_id', () => String, { nullable: true }) userId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<AdminUserType> {
    return readAnyUser(ctx.services, ctx.em, ctx.actor, { user_id: userId });
  }

  @TokenScope('account')
  @Query(() => AccountAuditPageType, {
    description: `What admin tokens and the operator's CLI changed on a user's account, newest first. ${ADMIN_ONLY}`,
  })
  adminAuditTrail(@Args() args: UserPageArgs, @Ctx() ctx: RequestContext): Promise<AccountAuditPageType> {
    return readAccountTrail(ctx.em, ctx.actor, args);
  }

  @TokenScope('account')
  @Query(() => [EspHealthType], {
    description: `Every configured eSign Service Provider: its health as failover records it, across processes. ${ADMIN_ONLY}`,
  })
  adminEspHealth(@Ctx() ctx: RequestContext): Promise<EspHealthType[]> {
    return readEspHealth(ctx.services, ctx.em, ctx.actor);
  }
}
