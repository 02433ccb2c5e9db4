import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';
import type { AuditEvent } from './audit-event.entity';

@ObjectType('AuditEvent', {
  simpleResolvers: true,
  description: 'One step of a session: who, when, from which address and browser.',
})
export class AuditEventType {
  @Field()
  event!: string;

  @Field()
  at!: Date;

  @Field(() => String, { nullable: true, description: 'The signer who took the step; null for the session’s own steps.' })
  signer_id!: string | null;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => String, { nullable: true })
  user_agent!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'What the step recorded (channel, position, scores...).' })
  details!: Record<string, unknown> | null;
}

@ObjectType('EsignAuditTrail', { simpleResolvers: true })
export class AuditTrailType {
  @Field()
  client_id!: string;

  @Field(() => [AuditEventType], { description: 'Oldest first.' })
  events!: AuditEventType[];
}

export function toAuditEventView(event: AuditEvent): AuditEventType {
  return {
    event: event.event,
    at: event.at,
    signer_id: event.signer?.id ?? null,
    ip: event.ip ?? null,
    user_agent: event.userAgent ?? null,
    details: event.details ?? null,
  };
}
