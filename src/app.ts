import 'reflect-metadata';
import http from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type NextFunction, type Request, type Response } from 'express';
import { print, type GraphQLSchema } from 'graphql';
import { graphqlUploadExpress } from 'graphql-upload-ts';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { MAX_PDF_BYTES } from './modules/files';
import { authenticateHeader } from './platform/auth/authenticate';
import { TOKEN_REVOKED_TOPIC, TokenSockets } from './platform/auth/token-sockets';
import { AppError } from './platform/errors';
import { createRequestContext, type RequestContext } from './platform/graphql/context';
import { subscribeSharingResults } from './platform/graphql/shared-subscribe';
import { executeOperation, executingGateway } from './platform/graphql/execute';
import { asGraphQLError, operationLimitsPlugin } from './platform/graphql/operation-limits';
import { ratePolicies, takeRequest } from './platform/rate-limit/enforce';
import { formatGraphQLError, graphqlHttpErrorHandler } from './platform/graphql/format-error';
import { GRAPHQL_MAX_REQUEST_BYTES } from './platform/graphql/limits';
import { prepareOperation } from './platform/graphql/prepare-operation';
import { buildAppSchema, validationRules } from './platform/graphql/schema';
import { requestLogger } from './platform/request-log';
import { errorEnvelope, sendError } from './platform/rest/envelope';
import { createRestRouter, restErrorFromExpress } from './platform/rest/rest-router';
import type { Composition } from './platform/module';
import { REST_BASE } from './platform/rest/sofa';
import type { AppServices } from './platform/services';
import { DOWNLOAD_PATH } from './platform/storage/signed-urls';
import { serveDownload } from './platform/storage/serve-download';

export interface HttpApp {
  server: http.Server;
  app: express.Express;
  schema: GraphQLSchema;
  /** Stops taking new work, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
  close(graceMs: number): Promise<void>;
}

/** Builds the whole HTTP face (GraphQL, graphql-ws, REST, downloads, health) of the composition around the services. */
export async function createHttpApp(services: AppServices, composition: Composition): Promise<HttpApp> {
  const { log, config } = services;
  const schema = await buildAppSchema(composition.resolvers);
  const app = express();
  const server = http.createServer(app);
  app.disable('x-powered-by');
  if (config.trustProxy) app.set('trust proxy', config.trustProxy);

  app.use(requestLogger(log));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness(services);
    const ready = Object.values(checks).every((state) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  const policies = ratePolicies(config);
  app.get(`${DOWNLOAD_PATH}/:token`, (req, res, next) => {
    // A signed link is its own credential: its quota is the client address's.
    try {
      takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
    } catch (error) {
      next(error);
      return;
    }
    serveDownload(services, String(req.params.token), res).catch(next);
  });

  const formatError = formatGraphQLError(log);
  const apollo = new ApolloServer<RequestContext>({
    gateway: executingGateway(schema),
    validationRules,
    formatError,
    // The cache-control plugin wraps every field's resolver to collect cache hints we never give; /graphql
    // answers are always `no-store` (set below).
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      operationLimitsPlugin(config.graphql),
    ],
    // graphql-js stops parsing a document beyond this many tokens (graphql-ws parses with the same bound).
    parseOptions: { maxTokens: config.graphql.maxTokens },
    // Explicit, so that NODE_ENV=production does not turn it off: the endpoint answers only with a token.
    introspection: true,
    // Uploads send multipart: clients add `apollo-require-preflight: true` (see README).
    csrfPrevention: true,
  });
  await apollo.start();
  app.use(
    '/graphql',
    async (req: Request, res: Response, next: NextFunction) => {
      res.setHeader('Cache-Control', 'no-store');
      const actor = await authenticateHeader(services, req.headers.authorization).catch(next);
      if (actor === undefined) return;
      try {
        // Refused credentials count against the client's address, so guessing tokens is throttled too.
        if (!actor) takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
        else takeRequest(services.rateLimiter, policies.token, actor.tokenId, res);
      } catch (error) {
        next(error);
        return;
      }
      if (!actor) {
        if (!res.headersSent) {
          res.status(401).json({ errors: [{ message: 'unauthorized', extensions: { code: 'unauthorized', status: 401 } }] });
        }
        return;
      }
      res.locals.actor = actor;
      next();
    },
    // One byte over the limit reaches the service, which refuses it with file_too_large.
    graphqlUploadExpress({ maxFileSize: MAX_PDF_BYTES + 1, maxFiles: 1, maxFieldSize: GRAPHQL_MAX_REQUEST_BYTES }),
    express.json({ limit: GRAPHQL_MAX_REQUEST_BYTES }),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => createRequestContext(services, res.locals.actor, req.headers),
    }),
    graphqlHttpErrorHandler(log),
  );

  // ws closes a socket whose message is larger with 1009 (message too big) before anything reads it.
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: GRAPHQL_MAX_REQUEST_BYTES });
  // ws closes a socket whose message is over the limit (1009) and emits 'error' on it, which graphql-ws logs as
  // an internal error with its stack: a client could fill the error log, before it even authenticates. It is a
  // refused request, logged as one.
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
  const tokenSockets = new TokenSockets(log);
  tokenSockets.follow(services.events.subscribe(TOKEN_REVOKED_TOPIC));
  const stopRechecking = services.events.onReconnect(
    () => void tokenSockets.recheck((tokenIds) => services.tokens.liveTokenIds(tokenIds)),
  );
  const wsHandle = useServer<Record<string, unknown>, { actor?: RequestContext['actor'] }>(
    {
      schema,
      // A connection lives only with a valid token in connection_init: `{"authorization": "Bearer esk_..."}`.
      onConnect: async (ctx) => {
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
      },
      onSubscribe: (ctx, _id, payload) => {
        // Each operation on a socket counts as a request of its token; a refusal ends that operation only.
        try {
          takeRequest(services.rateLimiter, policies.token, ctx.extra.actor!.tokenId);
        } catch (error) {
          return [asGraphQLError(error as AppError)];
        }
        const prepared = prepareOperation(schema, validationRules, config.graphql, payload);
        return Array.isArray(prepared) ? prepared : { schema, ...prepared };
      },
      // Queries and mutations sent over the socket run as over HTTP (input checks, compiled execution).
      execute: (args) => executeOperation(args),
      context: (ctx) => createRequestContext(services, ctx.extra.actor!),
      subscribe: (args) =>
        subscribeSharingResults(
          args,
          JSON.stringify([
            (args.contextValue as RequestContext).actor.userId,
            print(args.document),
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

  app.use(REST_BASE, createRestRouter(services, schema, composition.restRoutes));
  for (const mount of composition.mounts) app.use(mount.path, mount.router(services));

  app.use((_req: Request, res: Response) => sendError(res, new AppError('not_found')));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const known = restErrorFromExpress(error);
    if (known) {
      sendError(res, known);
      return;
    }
    log.error({ err: error }, 'unexpected error');
    if (!res.headersSent) res.status(500).json(errorEnvelope(new AppError('internal_error')));
  });

  return {
    server,
    app,
    schema,
    close: async (graceMs: number) => {
      // graphql-ws clients are told the server is going away (1001) and may reconnect elsewhere.
      await Promise.resolve(wsHandle.dispose()).catch((error: unknown) => log.warn({ err: error }, 'closing graphql-ws'));
      stopRechecking();
      await tokenSockets.stop();
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends; close each as soon as it does.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await drained;
      clearInterval(sweeper);
      clearTimeout(timer);
      await apollo.stop();
    },
  };
}

async function readiness(services: AppServices): Promise<Record<string, string>> {
  const check = async (probe: () => Promise<unknown>) => {
    try {
      await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
      return 'ok';
    } catch {
      return 'failing';
    }
  };
  const [database, queue, storage] = await Promise.all([
    check(() => services.orm.em.getConnection().execute('select 1')),
    check(() => services.boss.getQueues()),
    check(() => services.blobs.check()),
  ]);
  return { database, queue, storage };
}
