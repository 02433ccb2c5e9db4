import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { StampRequestInput } from '../esign';
import { MaxItems } from '../../platform/graphql/operation-limits';
import type { Bulk, BulkRow, BulkRowStatus } from './bulk.entity';

export interface BulkCounts {
  rows: Record<BulkRowStatus, number>;
  /** The sessions the bulk made, by their status now (they move as their signers sign). */
  sessions: Record<string, number>;
}

@InputType('BulkSignerInput', { description: 'A template signer of a bulk row: who signs, and how to reach them.' })
export class BulkSignerInput {
  @Field(() => String, { nullable: true })
  full_name?: string | null;

  @Field(() => String, { nullable: true })
  email?: string | null;

  @Field(() => String, { nullable: true })
  mobile?: string | null;

  @Field(() => String, { nullable: true })
  country_code?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The language this signer reads in (added): `en`, `hi`, `bn`, `mr`, `te`, `ta`, `gu`, `kn` or `ml`; the template signer’s otherwise.',
  })
  language?: string | null;
}

@InputType('BulkRowInput', { description: 'One recipient of a bulk send: one session.' })
export class BulkRowInput {
  @Field(() => String, { nullable: true, description: 'Your own key for the row (at most 200 characters), unique in the bulk.' })
  key?: string | null;

  @Field(() => [BulkSignerInput], { nullable: true, description: 'The template’s signers, in its order.' })
  signers?: BulkSignerInput[] | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Values by the template’s `field_id`.' })
  element_values?: Record<string, unknown> | null;

  @Field(() => StampRequestInput, { nullable: true, description: 'This row’s stamps (the bulk’s `stamp` otherwise).' })
  stamp?: StampRequestInput | null;
}

@ObjectType('BulkRowCounts', { description: 'A bulk’s rows by state.' })
export class BulkRowCountsType {
  @Field(() => Int) queued!: number;
  @Field(() => Int) created!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) skipped!: number;
}

@ObjectType('BulkSessionCounts', { description: 'The sessions a bulk made, by their status now.' })
export class BulkSessionCountsType {
  @Field(() => Int) pending!: number;
  @Field(() => Int) completed!: number;
  @Field(() => Int) expired!: number;
  @Field(() => Int) cancelled!: number;
  @Field(() => Int) declined!: number;
}

@ObjectType('Bulk', { description: 'A bulk send: one template, one session per row (added).' })
export class BulkType {
  @Field(() => String) client_id!: string;
  @Field(() => String, { description: '`queued`, `running`, `completed` or `cancelled`.' }) status!: string;
  @Field(() => String) template_id!: string;
  @Field(() => Int) template_version!: number;
  @Field(() => String, { description: '`json` or `csv`.' }) source!: string;
  @Field(() => Int) row_count!: number;
  @Field(() => BulkRowCountsType) rows!: BulkRowCountsType;
  @Field(() => BulkSessionCountsType) sessions!: BulkSessionCountsType;
  @Field(() => Date) created_at!: Date;
  @Field(() => Date, { nullable: true }) finished_at!: Date | null;
}

@ObjectType('BulkPage')
export class BulkPageType {
  @Field(() => [BulkType])
  @MaxItems(100)
  items!: BulkType[];

  @Field(() => Boolean) has_next!: boolean;
}

@ObjectType('BulkRowProblem')
export class BulkRowProblemType {
  @Field(() => String) field!: string;
  @Field(() => String) problem!: string;
}

@ObjectType('BulkRowError', { description: 'Why a row made no session: what initialize-from-template would have answered.' })
export class BulkRowErrorType {
  @Field(() => String) code!: string;
  @Field(() => String) message!: string;

  @Field(() => [BulkRowProblemType])
  @MaxItems(200)
  errors!: BulkRowProblemType[];
}

@ObjectType('BulkRow')
export class BulkRowType {
  @Field(() => Int, { description: 'The row’s place in the bulk, from 0.' }) position!: number;
  @Field(() => String, { nullable: true }) key!: string | null;
  @Field(() => String, { description: '`queued`, `created`, `failed` or `skipped`.' }) status!: string;
  @Field(() => String, { nullable: true, description: 'The session the row became.' }) session_id!: string | null;
  @Field(() => BulkRowErrorType, { nullable: true }) error!: BulkRowErrorType | null;
}

@ObjectType('BulkRowPage')
export class BulkRowPageType {
  @Field(() => String) client_id!: string;

  @Field(() => [BulkRowType])
  @MaxItems(100)
  items!: BulkRowType[];

  @Field(() => Boolean) has_next!: boolean;
}

export function toBulkView(bulk: Bulk, counts: BulkCounts): BulkType {
  const sessions = counts.sessions;
  return {
    client_id: bulk.id,
    status: bulk.status,
    template_id: bulk.template.id,
    template_version: bulk.templateVersion,
    source: bulk.source,
    row_count: bulk.rowCount,
    rows: counts.rows,
    sessions: {
      pending: sessions.pending ?? 0,
      completed: sessions.completed ?? 0,
      expired: sessions.expired ?? 0,
      cancelled: sessions.cancelled ?? 0,
      declined: sessions.declined ?? 0,
    },
    created_at: bulk.createdAt,
    finished_at: bulk.finishedAt ?? null,
  };
}

export function toBulkRowView(row: BulkRow): BulkRowType {
  return {
    position: row.position,
    key: row.key ?? null,
    status: row.status,
    session_id: row.sessionId ?? null,
    error: row.error ?? null,
  };
}
