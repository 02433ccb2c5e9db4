import { Args, Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { PageArgs } from '../../platform/graphql/paging';
import { formatRupees } from '../../platform/money';
import { listLedger, walletBalance } from './read-wallet';
import type { WalletEntry } from './wallet.entity';
import { MaxItems } from '../../platform/graphql/operation-limits';
import { PageOf } from '../../platform/graphql/page-type';

@ObjectType('WalletEntry', { simpleResolvers: true })
export class WalletEntryType {
  @Field() entry_id!: string;
  @Field({ description: '`credit`, `debit`, `charge` or `refund`.' }) kind!: string;
  @Field({ description: 'Rupees; negative for charges and debits.' }) amount!: string;
  @Field({ description: 'Rupees.' }) balance_after!: string;
  @Field() description!: string;
  @Field(() => String, { nullable: true, description: 'The order or stamp instance the entry is about.' }) reference!:
    string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "The user whose admin token made the entry (admin credits and debits); null for the service's charges and refunds and for the operator's CLI credits.",
  })
  performed_by!: string | null;
  @Field() created_at!: Date;
}

@ObjectType('Wallet', { simpleResolvers: true })
export class WalletType {
  @Field() user_id!: string;
  @Field({ description: 'Rupees, as a decimal string.' }) balance!: string;
  @Field() currency!: string;
  @Field(() => [WalletEntryType], { description: 'The latest 20 ledger entries (all of them: walletLedger).' })
  @MaxItems(20)
  recent_entries!: WalletEntryType[];
}

@ObjectType('WalletLedgerPage', { simpleResolvers: true })
export class WalletLedgerPageType extends PageOf(WalletEntryType) {}

export function toWalletEntryView(entry: WalletEntry): WalletEntryType {
  return {
    entry_id: entry.id,
    kind: entry.kind,
    amount: formatRupees(entry.amountPaise),
    balance_after: formatRupees(entry.balanceAfterPaise),
    description: entry.description,
    reference: entry.reference ?? null,
    performed_by: entry.actorUserId ?? null,
    created_at: entry.createdAt,
  };
}

@Resolver()
export class WalletResolver {
  @TokenScope('stamps')
  @Query(() => WalletType, { description: 'Your wallet balance and latest ledger entries.' })
  async wallet(@Ctx() ctx: RequestContext): Promise<WalletType> {
    const [balance, recent] = await Promise.all([
      walletBalance(ctx.em, ctx.actor.userId),
      listLedger(ctx.em.fork(), ctx.actor.userId, { page: 1, size: 20 }),
    ]);
    return {
      user_id: ctx.actor.userId,
      balance: formatRupees(balance),
      currency: 'INR',
      recent_entries: recent.items.map(toWalletEntryView),
    };
  }

  @TokenScope('stamps')
  @Query(() => WalletLedgerPageType, { description: 'Your wallet ledger, newest first.' })
  async walletLedger(@Args() args: PageArgs, @Ctx() ctx: RequestContext): Promise<WalletLedgerPageType> {
    const page = await listLedger(ctx.em, ctx.actor.userId, args);
    return { items: page.items.map(toWalletEntryView), has_next: page.has_next };
  }
}
