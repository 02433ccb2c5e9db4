import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../platform/graphql/context';
import { TokenScope } from '../../../platform/graphql/token-scope';
import { AuditTrailType, readAuditTrail, toAuditEventView } from '../../audit';
import { getOwnSession } from '../session/own-session';

@Resolver(() => AuditTrailType)
export class AuditResolver {
  @TokenScope('sessions')
  @Query(() => AuditTrailType, { description: 'The audit trail of one of your sessions, oldest step first.' })
  async esignAudit(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<AuditTrailType> {
    const session = await getOwnSession(ctx.services, ctx.em, ctx.actor, clientId);
    const events = await readAuditTrail(ctx.em, session.id);
    return { client_id: session.id, events: events.map(toAuditEventView) };
  }
}
