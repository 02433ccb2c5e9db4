import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import { authenticateHeader } from '../auth/authenticate';
import { AppError, findAppError } from '../errors';
import { ratePolicies, takeRequest } from '../rate-limit/enforce';
import type { AppServices } from '../services';
import { sendError, sendSuccess } from './envelope';
import { checkArguments, routeArguments } from './check-arguments';
import { patchOpenApi } from './openapi';
import { refuseRouteOutOfScope } from '../graphql/token-scope';
import type { RestFormat, RestRoute } from './route';
import { createSofaHandler } from './sofa';

const JSON_BODY_LIMIT = '1mb';

/**
 * /api/v1: the documented routes and nothing else. The route table decides 404 and 405 before anything
 * runs, then the bearer token (401), then either a multipart handler or SOFA over the GraphQL schema.
 */
export function createRestRouter(services: AppServices, schema: GraphQLSchema, routes: RestRoute[]): express.Router {
  const sofa = createSofaHandler(services, schema, routes);
  const policies = ratePolicies(services.config);
  const openApi = patchOpenApi(sofa.openAPIDocument, routes, services.config.publicUrl);
  const router = express.Router();
  const rawBody = express.raw({ type: () => true, limit: JSON_BODY_LIMIT });
  // A route that takes more (a bulk's rows) names its own bound: one reader per bound.
  const rawBodies = new Map<string, express.RequestHandler>();
  const rawBodyOf = (route: RestRoute) => {
    if (!route.jsonBodyLimit) return rawBody;
    let reader = rawBodies.get(route.jsonBodyLimit);
    if (!reader) rawBodies.set(route.jsonBodyLimit, (reader = express.raw({ type: () => true, limit: route.jsonBodyLimit })));
    return reader;
  };

  router.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    // Answers carry owner data and signer tokens: no cache keeps them.
    res.setHeader('Cache-Control', 'no-store');
    try {
      const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
      const candidates = routes.filter((route) => route.path === path);
      if (candidates.length === 0) throw new AppError('not_found', { message: 'not_found' });
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const route = candidates.find((candidate) => candidate.method === method);
      if (!route) {
        res.setHeader('Allow', candidates.map((candidate) => candidate.method).join(', '));
        throw new AppError('method_not_allowed');
      }
      const actor = await authenticateHeader(services, req.headers.authorization);
      if (!actor) {
        // Refused credentials count against the client's address, so guessing tokens is throttled too.
        takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
        throw new AppError('unauthorized');
      }
      takeRequest(services.rateLimiter, policies.token, actor.tokenId, res);
      res.locals.actor = actor;
      refuseRouteOutOfScope(schema, route.operation, actor);

      if (route.multipart && (!route.multipart.orJson || req.is('multipart/form-data'))) {
        sendSuccess(res, await route.multipart.handle(services, actor, req, res));
        return;
      }
      // GET and DELETE take query parameters; POST and PUT take the JSON body only (SOFA would let a query
      // parameter override a body field, so the query string is dropped for them).
      if (route.method === 'POST' || route.method === 'PUT') {
        const body = await parseJsonBody(rawBodyOf(route), req, res);
        checkArguments(routeArguments(schema, route), body, false);
        req.url = req.url.split('?')[0];
        req.originalUrl = req.originalUrl.split('?')[0];
      } else {
        if (route.method !== 'GET') await parseJsonBody(rawBody, req, res);
        checkArguments(routeArguments(schema, route), req.query as Record<string, unknown>, true);
        const format = otherFormat(route, req.query.format);
        if (format) {
          await format.send(services, actor, req, res);
          return;
        }
      }
      sofa(req, res, next);
    } catch (error) {
      next(error);
    }
  });
  return router;
}

/** The answer a route's `format` query parameter asks for instead of JSON, if any (400 for a format it lacks). */
function otherFormat(route: RestRoute, format: unknown): RestFormat | undefined {
  if (!route.formats || format === undefined || format === 'json') return undefined;
  const chosen = typeof format === 'string' && Object.hasOwn(route.formats, format) ? route.formats[format] : undefined;
  if (!chosen) {
    const known = ['json', ...Object.keys(route.formats)].join(', ');
    throw AppError.badRequest([{ field: 'format', problem: `must be one of ${known}` }]);
  }
  return chosen;
}

/** Reads the body (bounded) and refuses what is not a JSON object, before SOFA sees it. */
async function parseJsonBody(rawBody: express.RequestHandler, req: Request, res: Response): Promise<Record<string, unknown>> {
  await new Promise<void>((resolve, reject) => rawBody(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  const body = req.body as Buffer | undefined;
  if (!Buffer.isBuffer(body) || body.length === 0) {
    req.body = undefined;
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw AppError.badRequest([{ field: 'body', problem: 'malformed JSON' }]);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw AppError.badRequest([{ field: 'body', problem: 'must be a JSON object' }]);
  }
  return parsed as Record<string, unknown>;
}

/** Body-parser errors carry a status and a type; turn them into documented codes. */
export function restErrorFromExpress(error: unknown): AppError | undefined {
  const appError = findAppError(error);
  if (appError) return appError;
  const e = error as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return new AppError('payload_too_large');
  if (e?.type === 'entity.parse.failed' || e?.type === 'request.aborted' || e?.type === 'request.size.invalid') {
    return AppError.badRequest([{ field: 'body', problem: e.type }]);
  }
  if (e?.status === 400) return new AppError('bad_request');
  return undefined;
}

export { sendError };
