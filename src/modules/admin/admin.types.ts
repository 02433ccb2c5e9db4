import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import { WalletEntryType } from '../wallet';

@ObjectType('AdminWalletChange', {
  simpleResolvers: true,
  description: 'A credit or debit an admin made: the ledger entry and the balance after it.',
})
export class AdminWalletChangeType {
  @Field() user_id!: string;
  @Field({ description: 'Rupees, after the entry.' }) balance!: string;
  @Field() currency!: string;
  @Field(() => WalletEntryType) entry!: WalletEntryType;
}

@ObjectType('AdminWalletLedger', { simpleResolvers: true, description: "A user's balance and one page of their ledger." })
export class AdminWalletLedgerType extends PageOf(WalletEntryType) {
  @Field() user_id!: string;
  @Field({ description: 'Rupees.' }) balance!: string;
  @Field() currency!: string;
}

@ObjectType('StampFee', { simpleResolvers: true, description: "What a user's stamp orders pay per stamp on top of the duty." })
export class StampFeeType {
  @Field() user_id!: string;
  @Field({ description: 'Rupees per stamp: the user’s own fee, or the default.' }) stamp_fee!: string;
  @Field({ description: 'Rupees per stamp: the configured fee (ESTAMP_FEE_PER_STAMP).' }) default_stamp_fee!: string;
  @Field({ description: 'True when an admin set this user’s own fee; false: the default applies.' }) custom!: boolean;
}

@ObjectType('AdminUser', { simpleResolvers: true, description: 'A user as an admin sees them.' })
export class AdminUserType extends StampFeeType {
  @Field() email!: string;
  @Field() created_at!: Date;
  @Field({ description: 'Rupees.' }) balance!: string;
  @Field() currency!: string;
}

@ObjectType('AccountAuditEvent', {
  simpleResolvers: true,
  description: "A change made to a user's account by an admin token or the operator's CLI.",
})
export class AccountAuditEventType {
  @Field() event_id!: string;
  @Field({ description: '`wallet_credited`, `wallet_debited` or `stamp_fee_set`.' }) action!: string;
  @Field({ description: 'The account it changed.' }) user_id!: string;
  @Field(() => String, { nullable: true, description: "The admin token's user; null for the operator's CLI." })
  actor_user_id!: string | null;
  @Field(() => String, { nullable: true, description: 'The admin token used; null for the CLI.' })
  actor_token_id!: string | null;
  @Field(() => GraphQLJSONObject, {
    description: 'What changed: `entry_id`, `amount`, `balance_after`, `description`; or `stamp_fee_before`, `stamp_fee`.',
  })
  details!: Record<string, unknown>;
  @Field(() => String, { nullable: true }) ip!: string | null;
  @Field(() => String, { nullable: true }) user_agent!: string | null;
  @Field() at!: Date;
}

@ObjectType('AccountAuditPage', { simpleResolvers: true })
export class AccountAuditPageType extends PageOf(AccountAuditEventType) {}

@ObjectType('EspHealth', {
  simpleResolvers: true,
  description: 'One configured eSign Service Provider as failover sees it (docs/signing.md, ESP failover).',
})
export class EspHealthType {
  @Field({ description: 'The backend name (ESP_<NAME>_*, in lower case).' }) backend!: string;
  @Field({ description: 'The CCA eSign API version it speaks: 2.1 or 3.2.' }) version!: string;
  @Field({ description: 'The sandbox ESP this service mounts itself.' }) built_in!: boolean;
  @Field(() => [String], { description: 'The groups (ESP_GROUP_<NAME>) that name it.' }) groups!: string[];
  @Field({
    description:
      '`healthy` (answered last time), `failing` (failed last time), `skipped` (failed ESP_FAILURES_BEFORE_SKIP times in a row: passed over until `skipped_until`), `unknown` (never tried).',
  })
  state!: string;
  @Field(() => Int) consecutive_failures!: number;
  @Field(() => Int) failures_total!: number;
  @Field(() => Int) successes_total!: number;
  @Field(() => Date, { nullable: true }) last_failure_at!: Date | null;
  @Field(() => Date, { nullable: true }) last_success_at!: Date | null;
  @Field(() => String, { nullable: true, description: 'What the last failure was.' }) last_problem!: string | null;
  @Field(() => Date, { nullable: true }) skipped_until!: Date | null;
}
