import { Field, Float, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import { formatRupees } from '../../platform/money';
import type { StampInstanceEvent } from './stamp-instance-event.entity';
import type { StampInstance, StampOrder } from './stamp-order.entity';

@ObjectType('StampStateInfo', { simpleResolvers: true })
export class StampStateType {
  @Field()
  state_code!: string;

  @Field()
  name!: string;
}

@ObjectType('StampArticleInfo', { simpleResolvers: true })
export class StampArticleType {
  @Field()
  article_id!: string;

  @Field()
  name!: string;

  @Field()
  description!: string;
}

@ObjectType('StampInstance', { simpleResolvers: true })
export class StampInstanceType {
  @Field({ description: '`stamp_inst_...`' })
  stamp_id!: string;

  @Field({ description: '`pending`, `available`, `reserved`, `used` or `rejected`.' })
  status!: string;

  /** For the GraphQL-only field resolvers. */
  order_id!: string;
  session_id!: string | null;
  pdf_file_id!: string | null;
  certificate!: { number: string | null; issued_at: Date | null; rejected_reason: string | null };
}

@ObjectType('StampInstanceStep', { simpleResolvers: true, description: 'One step of a stamp instance’s life.' })
export class StampInstanceStepType {
  @Field(() => String, { nullable: true, description: 'Null for the instance’s creation.' })
  from_status!: string | null;

  @Field()
  status!: string;

  @Field()
  at!: Date;

  @Field(() => String, { nullable: true, description: 'The session that reserved, used or released it.' })
  session_id!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Why: the vendor’s refusal for `rejected`; `session_completed`, `session_cancelled`, `session_expired` or `session_declined` for a use or a release.',
  })
  reason!: string | null;
}

@ObjectType('StampInstanceDetails', {
  simpleResolvers: true,
  description: 'One stamp instance as GET stamps/instance reads it: what it is, where it is, and how it got there.',
})
export class StampInstanceDetailsType {
  @Field({ description: '`stamp_inst_...`' }) stamp_id!: string;
  @Field({ description: '`pending`, `available`, `reserved`, `used` or `rejected`.' }) status!: string;
  @Field({ description: 'The order, `stamp_...`.' }) order_id!: string;
  @Field(() => Int, { description: 'Its place in the order, 1 to quantity.' }) serial!: number;
  @Field() state_code!: string;
  @Field() article_id!: string;
  @Field({ description: 'Rupees, as a string.' }) stamp_duty_amount!: string;
  @Field(() => String, { nullable: true }) certificate_number!: string | null;
  @Field(() => String, { nullable: true, description: 'Printed on the certificate; checked with the number.' })
  verification_code!: string | null;
  @Field(() => Date, { nullable: true }) issued_at!: Date | null;
  @Field(() => String, { nullable: true }) rejected_reason!: string | null;
  @Field(() => String, { nullable: true, description: 'The session holding it (`reserved`) or that used it (`used`).' })
  session_id!: string | null;
  @Field() created_at!: Date;
  @Field(() => [StampInstanceStepType], { description: 'Oldest first: created `pending`, then every move.' })
  history!: StampInstanceStepType[];
}

@ObjectType('StampStatusCounts', { simpleResolvers: true })
export class StatusCountsType {
  @Field(() => Int) pending!: number;
  @Field(() => Int) available!: number;
  @Field(() => Int) reserved!: number;
  @Field(() => Int) used!: number;
  @Field(() => Int) rejected!: number;
}

/** The order as create-order answers it: no status counts yet, and no stamps. */
@ObjectType('CreatedStampOrder', { simpleResolvers: true })
export class CreatedStampOrderType {
  @Field() user_id!: string;
  @Field({ description: '`stamp_...`' }) client_id!: string;
  @Field() created_at!: Date;
  @Field() state_code!: string;
  @Field() first_party_name!: string;
  @Field() second_party_name!: string;
  @Field() article_id!: string;

  @Field({ description: 'Duty per stamp in rupees, as a string.' })
  stamp_duty_amount!: string;

  @Field(() => Float)
  consideration_amount!: number;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => String, { nullable: true })
  first_party_address!: string | null;

  @Field(() => Int)
  quantity!: number;

  @Field()
  mock!: boolean;

  @Field(() => [StampInstanceType], { description: 'Procured instances; pending ones are counted, not listed.' })
  stamps!: StampInstanceType[];

  /** Narrows `stamps` when a list read filters by status. */
  stamps_status!: string | null;
  charged_paise!: bigint;
  /** Duty + fee of one stamp: what a refused stamp gives back (mock orders: nothing was charged). */
  refund_per_stamp_paise!: bigint;
}

@ObjectType('StampOrder', { simpleResolvers: true })
export class StampOrderType extends CreatedStampOrderType {
  @Field(() => StatusCountsType)
  status_counts!: StatusCountsType;
}

@ObjectType('StampOrderPage', { simpleResolvers: true })
export class StampOrderPageType extends PageOf(StampOrderType) {}

@ObjectType('StampDownload', { simpleResolvers: true })
export class StampDownloadType {
  @Field() stamp_id!: string;
  @Field() url!: string;
  @Field(() => Int, { description: 'Seconds.' }) expires_in!: number;
  @Field(() => Int) page_count!: number;
}

/** `stamps` and `status_counts` are filled by field resolvers (batched); these are the order's own fields. */
export function toOrderView(order: StampOrder, stampsStatus: string | null = null): StampOrderType {
  return {
    user_id: order.user.id,
    client_id: order.id,
    created_at: order.createdAt,
    state_code: order.stateCode,
    first_party_name: order.firstPartyName,
    second_party_name: order.secondPartyName,
    article_id: order.articleId,
    stamp_duty_amount: (order.dutyPaise / 100n).toString(),
    consideration_amount: Number(order.considerationPaise) / 100,
    description: order.description ?? null,
    first_party_address: order.firstPartyAddress ?? null,
    quantity: order.quantity,
    mock: order.mock,
    stamps_status: stampsStatus,
    charged_paise: order.chargedPaise,
    refund_per_stamp_paise: order.dutyPaise + order.feePaise,
  } as StampOrderType;
}

export function toStampView(instance: StampInstance): StampInstanceType {
  return {
    stamp_id: instance.id,
    status: instance.status,
    order_id: instance.order.id,
    session_id: instance.session?.id ?? null,
    pdf_file_id: instance.pdfFile?.id ?? null,
    certificate: {
      number: instance.certificateNumber ?? null,
      issued_at: instance.issuedAt ?? null,
      rejected_reason: instance.rejectedReason ?? null,
    },
  };
}

export function chargedAmount(order: { charged_paise: bigint }): string {
  return formatRupees(order.charged_paise);
}

export function toStampDetailsView(instance: StampInstance, history: StampInstanceEvent[]): StampInstanceDetailsType {
  return {
    stamp_id: instance.id,
    status: instance.status,
    order_id: instance.order.id,
    serial: instance.serial,
    state_code: instance.stateCode,
    article_id: instance.articleId,
    stamp_duty_amount: (instance.dutyPaise / 100n).toString(),
    certificate_number: instance.certificateNumber ?? null,
    verification_code: instance.verificationCode ?? null,
    issued_at: instance.issuedAt ?? null,
    rejected_reason: instance.rejectedReason ?? null,
    session_id: instance.session?.id ?? null,
    created_at: instance.createdAt,
    history: history.map((step) => ({
      from_status: step.fromStatus ?? null,
      status: step.toStatus,
      at: step.at,
      session_id: step.sessionId ?? null,
      reason: step.reason ?? null,
    })),
  };
}
