import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { ownedOrNotFound, ownedOrNull } from '../../../platform/auth/ownership';
import { eventContext, type RequestContext } from '../../../platform/graphql/context';
import { BrowserReadable, TokenScope } from '../../../platform/graphql/token-scope';
import { startingWith } from '../../../platform/graphql/starting-point';
import { GraphQLOnly } from '../../../platform/graphql/graphql-only';
import { PageArgs } from '../../../platform/graphql/paging';
import { FileInfoType, toFileInfo } from '../../files';
import { StampInstanceType, toStampView, MAX_EXPLICIT_STAMPS } from '../../stamps';
import { cancelSession } from '../session/cancel-session';
import { reassignSigner } from '../signers/reassign-signer';
import { resendInvite } from '../signers/resend-invite';
import { downloadCompletionCertificate, downloadSignedDocuments, downloadSignedPdf } from '../completion/download-signed-pdf';
import { initializeEsign } from '../session/initialize-esign';
import { getOwnSession, sessionNotFound } from '../session/own-session';
import { listOwnSessions, readOwnSession } from './read-sessions';
import { readOwnDocuments } from './read-documents';
import { EsignDocumentDownloadsType, EsignDocumentType } from './document.types';
import {
  DocumentInput,
  EmailTemplateOverridesInput,
  SignerInput,
  StampRequestInput,
  type SessionRequest,
} from '../session/session.inputs';
import { sessionTopic, type SessionEvent } from '../session-events';
import { EsignSessionPageType, EsignSessionType, ResentInviteType, SignedPdfDownloadType, toSessionView } from './session.types';
import { ElementType, SignerType, toSignerView } from './signer.types';
import { inviteUrl, signerTokenBox } from '../signers/signer-token';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import { LIMITS } from '../session/validation';
import { documentOf, type StoredElement } from '../elements/stored-element';

/** The session-level options both ways of starting a session take. */
@ArgsType()
export class SessionOptionsArgs {
  @Field(() => String, { nullable: true, description: '`aadhaar`, `suresign`, `pfx` (`pfx` needs `pfx_id` on each signer) or `dsc` (added: the signer’s own DSC token).' })
  sign_type?: string | null;

  @Field(() => Int, { nullable: true, description: '1 = OTP (default), 2 = biometric.' })
  auth_mode?: number | null;

  @Field(() => String, { nullable: true })
  folder?: string | null;

  @Field(() => Int, { nullable: true, description: '3600 to 2592000; default 604800 (7 days).' })
  expiry_seconds?: number | null;

  @Field(() => Int, { nullable: true, description: 'Signing attempts a signer may fail, 1 to 10; default 3.' })
  max_retry?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Whether signers may download the signed PDF; default true.' })
  allow_download?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Whether a signer may hand their place to someone else (POST /signer-api/delegate); default false (added).',
  })
  allow_delegation?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'Whether the certificate of completion is also appended to the signed PDF, as its last incremental update signed by the platform; default false (added).',
  })
  append_certificate?: boolean | null;

  @Field(() => String, {
    nullable: true,
    description:
      '`sequential` (default): signers sign in array order; `parallel`: every signer may sign at once, in any order (added).',
  })
  signing_order?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Remind the signer whose turn it is every so many hours (1 to 720) until they act (added).',
  })
  reminder_interval_hours?: number | null;

  @Field(() => Int, { nullable: true, description: 'Reminders per signer, 1 to 10; default 3 (added).' })
  reminder_max?: number | null;

  @Field(() => String, { nullable: true, description: 'Absolute http(s) URL the signer is sent to after signing.' })
  redirect_url?: string | null;

  @Field(() => String, { nullable: true, description: 'Signing backend; `sandbox` (default) is built in.' })
  backend?: string | null;

  @Field(() => String, { nullable: true })
  sender?: string | null;

  @Field(() => EmailTemplateOverridesInput, { nullable: true })
  email_template_overrides?: EmailTemplateOverridesInput | null;

  @Field(() => StampRequestInput, { nullable: true, description: 'Stamps to reserve: the amount flow or the explicit flow.' })
  stamp?: StampRequestInput | null;
}

@ArgsType()
export class InitializeEsignArgs extends SessionOptionsArgs implements SessionRequest {
  @Field(() => String, { nullable: true, description: 'A PDF from upload-pdf: a session of one document.' })
  file_id?: string | null;

  @Field(() => [DocumentInput], {
    nullable: true,
    description: `Instead of \`file_id\`: the envelope's documents, in the order signers see them; 1 to ${LIMITS.documents.max} (added).`,
  })
  documents?: DocumentInput[] | null;

  @Field(() => [SignerInput], { nullable: true, description: 'At least one; they sign in this order.' })
  signers?: SignerInput[] | null;
}

@ArgsType()
class SessionListArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: '`pending`, `completed`, `expired` or `cancelled`.' })
  status?: string | null;

  @Field(() => String, { nullable: true })
  folder?: string | null;
}

@Resolver(() => EsignSessionType)
export class EsignSessionResolver {
  @TokenScope('sessions')
  @Mutation(() => EsignSessionType, { description: 'Start a signing session on an uploaded PDF.' })
  async initializeEsign(@Args() args: InitializeEsignArgs, @Ctx() ctx: RequestContext): Promise<EsignSessionType> {
    return toSessionView(await initializeEsign(ctx.services, ctx.em, ctx.actor, args));
  }

  @TokenScope('sessions')
  @BrowserReadable(sessionNotFound)
  @Query(() => EsignSessionType, { description: 'One of your sessions, with its signers.' })
  async esignSession(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<EsignSessionType> {
    return toSessionView(await readOwnSession(ctx.services, ctx.actor, clientId));
  }

  @TokenScope('sessions')
  @Query(() => EsignSessionPageType, { description: 'Your sessions, newest first.' })
  async esignSessions(@Args() args: SessionListArgs, @Ctx() ctx: RequestContext): Promise<EsignSessionPageType> {
    const page = await listOwnSessions(ctx.services, ctx.em, ctx.actor, args);
    return { items: page.items.map(toSessionView), has_next: page.has_next };
  }

  @TokenScope('sessions')
  @Query(() => SignedPdfDownloadType, { description: 'A short-lived link to the signed PDF of a completed session.' })
  esignDownloadUrl(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<SignedPdfDownloadType> {
    return downloadSignedPdf(ctx.services, ctx.em, ctx.actor, clientId);
  }

  @TokenScope('sessions')
  @Query(() => SignedPdfDownloadType, {
    description:
      'A short-lived link to the certificate of completion of a completed session: the document, its fingerprints, every signer and the audit trail, signed by the platform.',
  })
  esignCompletionCertificateUrl(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<SignedPdfDownloadType> {
    return downloadCompletionCertificate(ctx.services, ctx.em, ctx.actor, clientId);
  }

  @TokenScope('sessions')
  @Query(() => EsignDocumentDownloadsType, {
    description: 'Short-lived links to every signed document of a completed session, in order, and to a ZIP of them all (added).',
  })
  esignDocumentDownloads(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<EsignDocumentDownloadsType> {
    return downloadSignedDocuments(ctx.services, ctx.em, ctx.actor, clientId);
  }

  @TokenScope('sessions')
  @Mutation(() => EsignSessionType, { description: 'Cancel a pending session.' })
  async cancelEsign(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<EsignSessionType> {
    return toSessionView(await cancelSession(ctx.services, ctx.em, ctx.actor, { client_id: clientId, reason }));
  }

  @TokenScope('sessions')
  @Mutation(() => ResentInviteType, {
    description: 'Send the invite of the signer whose turn it is again (at most 3 times an hour per signer).',
  })
  resendInvite(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Arg('signer_id', () => String, { nullable: true }) signerId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<ResentInviteType> {
    return resendInvite(ctx.services, ctx.em, ctx.actor, { client_id: clientId, signer_id: signerId }, ctx.origin);
  }

  @TokenScope('sessions')
  @Mutation(() => EsignSessionType, {
    description:
      'Hand a pending signer’s place to another person (new name and contact, new signer token: the old link stops working).',
  })
  async reassignSigner(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Arg('signer_id', () => String, { nullable: true }) signerId: string | null,
    @Arg('full_name', () => String, { nullable: true }) fullName: string | null,
    @Arg('email', () => String, { nullable: true }) email: string | null,
    @Arg('mobile', () => String, { nullable: true }) mobile: string | null,
    @Arg('country_code', () => String, { nullable: true }) countryCode: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<EsignSessionType> {
    const input = { client_id: clientId, signer_id: signerId, full_name: fullName, email, mobile, country_code: countryCode };
    return toSessionView(await reassignSigner(ctx.services, ctx.em, ctx.actor, input, ctx.origin));
  }

  @TokenScope('sessions')
  @BrowserReadable(sessionNotFound)
  @Subscription(() => EsignSessionType, {
    description: 'The session as it reads now, at once, then after every status change of it and its signers, as it then reads.',
    subscribe: async ({ args, context }) => {
      const ctx = context as RequestContext;
      const clientId = args.client_id as string;
      await getOwnSession(ctx.services, ctx.em, ctx.actor, clientId);
      // The topic is the session's own id, checked above; each event is checked again as it is read. Listening
      // starts before the current state is read, so a change between the two is not lost; after the bus lost its
      // connection, the resource is read again (what was published meanwhile never arrives). Followers that come
      // together share one starting read (EventBus.follow).
      const { start, live } = ctx.services.events.follow(sessionTopic(clientId), () => ({ client_id: clientId }));
      return startingWith(start, live);
    },
  })
  async esignSessionUpdated(
    @Arg('client_id') clientId: string,
    @Root() event: SessionEvent,
    @Ctx() ctx: RequestContext,
  ): Promise<EsignSessionType> {
    // A subscription outlives many events: each is read afresh, with one read shared by its subscribers.
    Object.assign(ctx, eventContext(ctx.services, ctx.actor, event));
    const session = event.client_id === clientId ? await ctx.loaders.sessionById.load(clientId) : null;
    return toSessionView(ownedOrNotFound(ctx.actor, session));
  }

  @FieldResolver(() => [SignerType])
  @MaxItems(LIMITS.signers.max)
  async signers(@Root() session: EsignSessionType, @Ctx() ctx: RequestContext): Promise<SignerType[]> {
    const box = signerTokenBox(ctx.services.config.secretsEncryptionKey);
    const signers = await ctx.loaders.signersBySession.load(session.client_id);
    return signers.map((signer) => {
      const token = box.openText(signer.tokenSealed);
      return toSignerView(signer, session, token, inviteUrl(ctx.services.config.publicUrl, token));
    });
  }

  /** On both faces (REST since issue 29): `[{ stamp_id, status }]` there, as an order's `stamps`. */
  @FieldResolver(() => [StampInstanceType], {
    description:
      'The stamps the session holds (`reserved`) or used (`used`), their pages first in the current PDF; empty once a cancel, expiry or decline gave them back (added).',
  })
  @MaxItems(MAX_EXPLICIT_STAMPS)
  async stamps(@Root() session: EsignSessionType, @Ctx() ctx: RequestContext): Promise<StampInstanceType[]> {
    // A session made without stamps never holds any: the hot details read costs no statement for them.
    if (session.stamp_page_count === 0) return [];
    return (await ctx.loaders.stampsBySession.load(session.client_id)).map(toStampView);
  }

  @FieldResolver(() => [EsignDocumentType], { description: 'The envelope’s documents, in order (added).' })
  @GraphQLOnly()
  @MaxItems(LIMITS.documents.max)
  async documents(@Root() session: EsignSessionType, @Ctx() ctx: RequestContext): Promise<EsignDocumentType[]> {
    return readOwnDocuments(ctx.services, ctx.em, ctx.actor, session.client_id);
  }

  @TokenScope('sessions')
  @Query(() => [EsignDocumentType], {
    description: 'The documents of one of your sessions: files, stamp pages, who signs each and how far (added).',
  })
  @MaxItems(LIMITS.documents.max)
  esignDocuments(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<EsignDocumentType[]> {
    return readOwnDocuments(ctx.services, ctx.em, ctx.actor, clientId);
  }

  @FieldResolver(() => FileInfoType, { description: 'The uploaded PDF.' })
  @GraphQLOnly()
  source_file(@Root() session: EsignSessionType, @Ctx() ctx: RequestContext): Promise<FileInfoType> {
    return ownFile(ctx, session.file_id);
  }

  @FieldResolver(() => FileInfoType, { description: 'The PDF as it currently stands (signed revisions included).' })
  @GraphQLOnly()
  current_pdf_file(@Root() session: EsignSessionType, @Ctx() ctx: RequestContext): Promise<FileInfoType> {
    return ownFile(ctx, session.current_pdf_file_id);
  }
}

async function ownFile(ctx: RequestContext, fileId: string): Promise<FileInfoType> {
  const file = await ctx.loaders.fileById.load(fileId);
  return toFileInfo(ownedOrNotFound(ctx.actor, file));
}

@Resolver(() => ElementType)
export class ElementResolver {
  @FieldResolver(() => FileInfoType, { nullable: true, description: 'The uploaded asset named by `value`, if it names one.' })
  @GraphQLOnly()
  async asset(@Root() element: ElementType, @Ctx() ctx: RequestContext): Promise<FileInfoType | null> {
    if (!element.value?.startsWith('file_')) return null;
    const file = await ctx.loaders.fileById.load(element.value);
    const own = ownedOrNull(ctx.actor, file);
    return own && toFileInfo(own);
  }

  /** GraphQL only: the contract's elements keep their fields; REST reads it from GET /esign/documents (`field_ids`). */
  @FieldResolver(() => Int, { description: 'The zero-based index of the envelope’s document the element is on (added).' })
  @GraphQLOnly()
  document(@Root() element: ElementType): number {
    return documentOf(element as unknown as StoredElement);
  }
}
