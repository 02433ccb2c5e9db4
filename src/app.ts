import 'reflect-metadata';
import http from 'node:http';
import express from 'express';
import type { GraphQLSchema } from 'graphql';
import { MAX_PDF_BYTES } from './modules/files';
import { buildAppSchema } from './platform/graphql/schema';
import { allowCrossOrigin } from './platform/http/cors';
import { mountDownloads } from './platform/http/downloads';
import { drainServer } from './platform/http/drain';
import { mountErrorHandlers } from './platform/http/errors';
import { mountGraphqlHttp } from './platform/http/graphql-http';
import { mountGraphqlWs } from './platform/http/graphql-ws';
import { mountHealth } from './platform/http/health';
import type { Composition } from './platform/module';
import { requestLogger } from './platform/request-log';
import { createRestRouter } from './platform/rest/rest-router';
import { REST_BASE } from './platform/rest/sofa';
import type { AppServices } from './platform/services';

export interface HttpApp {
  server: http.Server;
  app: express.Express;
  schema: GraphQLSchema;
  /** Stops taking new work, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
  close(graceMs: number): Promise<void>;
}

/**
 * Builds the whole HTTP face (GraphQL, graphql-ws, REST, downloads, health) of the composition around the services.
 * Express runs middleware in the order it is mounted: keep this order.
 */
export async function createHttpApp(services: AppServices, composition: Composition): Promise<HttpApp> {
  const { log, config } = services;
  const schema = await buildAppSchema(composition.resolvers);
  const app = express();
  const server = http.createServer(app);
  app.disable('x-powered-by');
  if (config.trustProxy) app.set('trust proxy', config.trustProxy);

  app.use(requestLogger(log));
  mountHealth(app, services);
  mountDownloads(app, services);
  app.use(['/graphql', REST_BASE], allowCrossOrigin);
  const graphqlHttp = await mountGraphqlHttp(app, services, schema, { maxUploadBytes: MAX_PDF_BYTES });
  const graphqlWs = mountGraphqlWs(server, services, schema);

  app.use(REST_BASE, createRestRouter(services, schema, composition.restRoutes));
  for (const mount of composition.mounts) app.use(mount.path, mount.router(services));

  mountErrorHandlers(app, log);

  return {
    server,
    app,
    schema,
    close: async (graceMs: number) => {
      await graphqlWs.close();
      await drainServer(server, graceMs);
      await graphqlHttp.close();
    },
  };
}
