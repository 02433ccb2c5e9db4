import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../platform/graphql/context';
import { TokenScope } from '../../../platform/graphql/token-scope';
import { getOwnSession } from '../session/own-session';
import { verifySessionSignatures } from '../completion/verify-session';
import { SignatureVerificationReportType, toVerificationView } from './verify.types';

@Resolver(() => SignatureVerificationReportType)
export class SignatureVerificationResolver {
  @TokenScope('sessions')
  @Query(() => SignatureVerificationReportType, {
    description:
      'Every signature of one of your sessions’ current PDF, checked in-process: digest, signature, ByteRange, and what changed after each; `documents`: the same for each document of the envelope.',
  })
  async esignVerification(
    @Arg('client_id') clientId: string,
    @Ctx() ctx: RequestContext,
  ): Promise<SignatureVerificationReportType> {
    const session = await getOwnSession(ctx.services, ctx.em, ctx.actor, clientId);
    return toVerificationView(await verifySessionSignatures(ctx.services, ctx.em, session));
  }
}
