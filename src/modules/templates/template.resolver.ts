import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ownedOrNotFound } from '../../platform/auth/ownership';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { GraphQLOnly } from '../../platform/graphql/graphql-only';
import { NestedPageArgs, PageArgs, windowOf } from '../../platform/graphql/paging';
import { DocumentInput, LIMITS, SessionOptionsArgs, EsignSessionType, toSessionView } from '../esign';
import { FileInfoType, toFileInfo } from '../files';
import { initializeFromTemplate, type InitializeFromTemplateRequest } from './initialize-from-template';
import { deleteTemplate, getOwnTemplate, listOwnTemplates } from './read-templates';
import { saveTemplate, type SaveTemplateInput } from './save-template';
import { TemplateRuntimeSignerInput, TemplateSignerInput } from './template.inputs';
import { DeletedTemplateType, TemplatePageType, TemplateType, toTemplateView } from './template.types';
import { updateTemplate } from './update-template';
import { MaxItems } from '../../platform/graphql/operation-limits';

@ArgsType()
class SaveTemplateArgs implements SaveTemplateInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'One of your PDFs: a template of one document.' })
  file_id?: string | null;

  @Field(() => [DocumentInput], {
    nullable: true,
    description: `Instead of \`file_id\`: the template's documents, in the order signers see them; 1 to ${LIMITS.documents.max} (added).`,
  })
  documents?: DocumentInput[] | null;

  @Field(() => String, { nullable: true })
  folder?: string | null;

  @Field(() => [TemplateSignerInput], { nullable: true, description: 'At least one, in signing order.' })
  signers?: TemplateSignerInput[] | null;
}

@ArgsType()
class UpdateTemplateArgs extends SaveTemplateArgs {
  @Field(() => String, { nullable: true })
  client_id?: string | null;
}

@ArgsType()
class TemplateListArgs extends PageArgs {
  @Field(() => String, { nullable: true })
  folder?: string | null;
}

@ArgsType()
class InitializeFromTemplateArgs extends SessionOptionsArgs implements InitializeFromTemplateRequest {
  @Field(() => String, { nullable: true })
  template_id?: string | null;

  @Field(() => [TemplateRuntimeSignerInput], { nullable: true, description: 'Same count and order as the template signers.' })
  signers?: TemplateRuntimeSignerInput[] | null;
}

/** What `sessions` lists when no page is asked for. */
const LATEST_TEMPLATE_SESSIONS = 100;

@Resolver(() => TemplateType)
export class TemplateResolver {
  @TokenScope('sessions')
  @Mutation(() => TemplateType, {
    description: 'Save a template: a PDF (or several documents) and an ordered list of signer layouts.',
  })
  async saveTemplate(@Args() args: SaveTemplateArgs, @Ctx() ctx: RequestContext): Promise<TemplateType> {
    return toTemplateView(await saveTemplate(ctx.em, ctx.actor, args));
  }

  @TokenScope('sessions')
  @Mutation(() => TemplateType, { description: 'Change a template; new signers replace the old ones (and their field ids).' })
  async updateTemplate(@Args() args: UpdateTemplateArgs, @Ctx() ctx: RequestContext): Promise<TemplateType> {
    return toTemplateView(await updateTemplate(ctx.em, ctx.actor, args));
  }

  @TokenScope('sessions')
  @Mutation(() => DeletedTemplateType, { description: 'Delete a template; sessions already started from it are not affected.' })
  async deleteTemplate(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<DeletedTemplateType> {
    const deleted = await deleteTemplate(ctx.em, ctx.actor, clientId);
    return { client_id: deleted.id, deleted_at: deleted.deletedAt! };
  }

  @TokenScope('sessions')
  @Query(() => TemplateType, { description: 'One of your templates.' })
  async template(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<TemplateType> {
    return toTemplateView(await getOwnTemplate(ctx.em, ctx.actor, clientId));
  }

  @TokenScope('sessions')
  @Query(() => TemplatePageType, { description: 'Your templates, newest first.' })
  async templates(@Args() args: TemplateListArgs, @Ctx() ctx: RequestContext): Promise<TemplatePageType> {
    const page = await listOwnTemplates(ctx.em, ctx.actor, args);
    return { items: page.items.map(toTemplateView), has_next: page.has_next };
  }

  @TokenScope('sessions')
  @Mutation(() => EsignSessionType, { description: 'Start a session from a template and runtime signer details.' })
  async initializeFromTemplate(@Args() args: InitializeFromTemplateArgs, @Ctx() ctx: RequestContext): Promise<EsignSessionType> {
    return toSessionView(await initializeFromTemplate(ctx.services, ctx.em, ctx.actor, args));
  }

  @FieldResolver(() => FileInfoType, { description: 'The template’s PDF.' })
  @GraphQLOnly()
  async file(@Root() template: TemplateType, @Ctx() ctx: RequestContext): Promise<FileInfoType> {
    const file = await ctx.loaders.fileById.load(template.file_id);
    return toFileInfo(ownedOrNotFound(ctx.actor, file));
  }

  @FieldResolver(() => [EsignSessionType], {
    description: 'Sessions started from this template, newest first: the latest 100, or a page of them.',
  })
  @GraphQLOnly()
  @MaxItems(LATEST_TEMPLATE_SESSIONS)
  async sessions(
    @Root() template: TemplateType,
    @Args() paging: NestedPageArgs,
    @Ctx() ctx: RequestContext,
  ): Promise<EsignSessionType[]> {
    const { offset, limit } = windowOf(paging, LATEST_TEMPLATE_SESSIONS);
    return (await ctx.loaders.sessionsByTemplate.load(`${template.client_id}|${offset}|${limit}`)).map(toSessionView);
  }
}
