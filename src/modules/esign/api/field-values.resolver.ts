import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../platform/graphql/context';
import { readFieldValues } from '../completion/field-values';
import { FieldValuesType } from './field-values.types';

@Resolver(() => FieldValuesType)
export class FieldValuesResolver {
  @Query(() => FieldValuesType, {
    description: 'The values of every field of one of your sessions: as kept, as drawn, when and by whom filled.',
  })
  esignFieldValues(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<FieldValuesType> {
    return readFieldValues(ctx.services, ctx.em, ctx.actor, clientId);
  }
}
