import type http from 'node:http';
import { print, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Context } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Actor } from '../auth/actor';
import { authenticateHeader } from '../auth/authenticate';
import { socketOrigin } from '../auth/request-origin';
import { TOKEN_REVOKED_TOPIC, TokenSockets } from '../auth/token-sockets';
import type { AppError } from '../errors';
import { createRequestContext, type RequestContext } from '../graphql/context';
import { executeOperation } from '../graphql/execute';
import { formatGraphQLError } from '../graphql/format-error';
import { GRAPHQL_MAX_REQUEST_BYTES } from '../graphql/limits';
import { asGraphQLError } from '../graphql/operation-limits';
import { prepareOperation } from '../graphql/prepare-operation';
import { refuseOutOfScope } from '../graphql/token-scope';
import { subscribeSharingResults } from '../graphql/shared-subscribe';
import { validationRules } from '../graphql/schema';
import type { Logger } from '../logger';
import { ratePolicies, takeRequest } from '../rate-limit/enforce';
import type { AppServices } from '../services';

/**
 * Serves graphql-ws on `/graphql` of `server`: a token in connection_init, rate limits per connection and per
 * operation, sockets closed when their token is revoked or expires. Returns how to close every socket.
 */
export function mountGraphqlWs(server: http.Server, services: AppServices, schema: GraphQLSchema): { close(): Promise<void> } {
  const { log, config } = services;
  const policies = ratePolicies(config);
  const formatError = formatGraphQLError(log);
  // ws closes a socket whose message is larger with 1009 (message too big) before anything reads it.
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: GRAPHQL_MAX_REQUEST_BYTES });
  logOversizeMessagesAsRefused(wsServer, log);
  const tokenSockets = new TokenSockets(log);
  tokenSockets.follow(services.events.subscribe(TOKEN_REVOKED_TOPIC));
  const stopRechecking = services.events.onReconnect(
    () => void tokenSockets.recheck((tokenIds) => services.tokens.liveTokenIds(tokenIds)),
  );
  const wsHandle = useServer<ConnectionParams, SocketActor>(
    {
      schema,
      onConnect: (ctx) => admitConnection(services, policies, tokenSockets, ctx),
      onSubscribe: (ctx, _id, payload) => {
        // Each operation on a socket counts as a request of its token; a refusal ends that operation only.
        try {
          takeRequest(services.rateLimiter, policies.token, ctx.extra.actor!.tokenId);
        } catch (error) {
          return [asGraphQLError(error as AppError)];
        }
        const prepared = prepareOperation(schema, validationRules, config.graphql, payload);
        if (Array.isArray(prepared)) return prepared;
        return refuseOutOfScope({ schema, ...prepared }, ctx.extra.actor!) ?? { schema, ...prepared };
      },
      // Queries and mutations sent over the socket run as over HTTP (input checks, compiled execution).
      execute: (args) => executeOperation(args),
      context: (ctx) => createRequestContext(services, ctx.extra.actor!, undefined, socketOrigin(ctx.extra.request)),
      subscribe: (args) =>
        subscribeSharingResults(
          args,
          JSON.stringify([
            (args.contextValue as RequestContext).actor.userId,
            printed(args.document),
            args.operationName ?? null,
            args.variableValues ?? null,
          ]),
        ),
      // The same error shapes as over HTTP: codes in extensions, faults reduced to internal_error.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } : result,
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => formatError(error.toJSON(), error)) as never,
    },
    wsServer,
  );
  return {
    close: async () => {
      // graphql-ws clients are told the server is going away (1001) and may reconnect elsewhere.
      await Promise.resolve(wsHandle.dispose()).catch((error: unknown) => log.warn({ err: error }, 'closing graphql-ws'));
      stopRechecking();
      await tokenSockets.stop();
    },
  };
}

/** Valid documents are kept (prepareOperation): each is printed once for the sharing keys of its subscribers. */
const printedDocuments = new WeakMap<DocumentNode, string>();

function printed(document: DocumentNode): string {
  let text = printedDocuments.get(document);
  if (text === undefined) printedDocuments.set(document, (text = print(document)));
  return text;
}

/** The payload of connection_init, and what an admitted connection carries beside its socket. */
type ConnectionParams = Record<string, unknown>;
type SocketActor = { actor?: Actor };

/**
 * ws closes a socket whose message is over the limit (1009) and emits 'error' on it, which graphql-ws logs as an
 * internal error with its stack: a client could fill the error log, before it even authenticates. It is a refused
 * request, logged as one.
 */
function logOversizeMessagesAsRefused(wsServer: WebSocketServer, log: Logger): void {
  wsServer.on('connection', (socket) => {
    const emit = socket.emit.bind(socket);
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event === 'error' && (args[0] as { code?: unknown } | undefined)?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        log.info({ limit: GRAPHQL_MAX_REQUEST_BYTES }, 'graphql-ws message over the size limit: socket closed (1009)');
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
  });
}

/**
 * A connection lives only with a valid token in connection_init (`{"authorization": "Bearer esk_..."}`), within the
 * rate limit of its token (or, without one, of its address); it is then followed until its token is revoked or
 * expires.
 */
async function admitConnection(
  services: AppServices,
  policies: ReturnType<typeof ratePolicies>,
  tokenSockets: TokenSockets,
  ctx: Context<ConnectionParams, Extra & Partial<SocketActor>>,
): Promise<boolean> {
  const params = ctx.connectionParams ?? {};
  const header =
    typeof params.authorization === 'string'
      ? params.authorization
      : typeof params.Authorization === 'string'
        ? params.Authorization
        : undefined;
  const actor = await authenticateHeader(services, header);
  const { socket } = ctx.extra;
  const address = ctx.extra.request.socket.remoteAddress ?? 'unknown';
  try {
    if (!actor) takeRequest(services.rateLimiter, policies.address, address);
    else takeRequest(services.rateLimiter, policies.token, actor.tokenId);
  } catch {
    socket.close(4429, 'rate_limited');
    return false;
  }
  if (!actor) {
    socket.close(4401, 'unauthorized');
    return false;
  }
  // Gone while the token was looked up: its 'close' has fired already and would never untrack it.
  if (socket.readyState !== socket.OPEN) return false;
  socket.once('close', tokenSockets.track(actor.tokenId, actor.expiresAt, socket));
  ctx.extra.actor = actor;
  return true;
}
