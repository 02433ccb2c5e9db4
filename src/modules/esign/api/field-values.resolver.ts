import { Arg, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../../platform/graphql/context';
import { TokenScope } from '../../../platform/graphql/token-scope';
import { GraphQLOnly } from '../../../platform/graphql/graphql-only';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import { readFieldValues } from '../completion/field-values';
import { signerFieldValues } from '../elements/field-values';
import type { StoredElement } from '../elements/stored-element';
import { LIMITS } from '../session/validation';
import { FieldValuesType, FieldValueType } from './field-values.types';
import { SignerType } from './signer.types';

@Resolver(() => FieldValuesType)
export class FieldValuesResolver {
  @TokenScope('sessions')
  @Query(() => FieldValuesType, {
    description: 'The values of every field of one of your sessions: as kept, as drawn, when and by whom filled.',
  })
  esignFieldValues(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<FieldValuesType> {
    return readFieldValues(ctx.services, ctx.em, ctx.actor, clientId);
  }
}

@Resolver(() => SignerType)
export class SignerFieldValuesResolver {
  /** GraphQL only: REST details keeps the contract's signer, and has each element's value and filled_at already. */
  @FieldResolver(() => [FieldValueType], {
    description:
      'This signer’s fields as esignFieldValues shows them; in esignSessionUpdated, the values at each change (added).',
  })
  @GraphQLOnly()
  @MaxItems(LIMITS.elementsPerSigner)
  fields(@Root() signer: SignerType): FieldValueType[] {
    return signerFieldValues({
      id: signer.signer_id,
      position: signer.position,
      elements: signer.elements as StoredElement[],
    });
  }
}
