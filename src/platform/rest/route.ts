import type { Request, Response } from 'express';
import type { Actor } from '../auth/actor';
import type { AppServices } from '../services';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * One documented REST route. Every route is served by a GraphQL root field (`operation`), through
 * SOFA; a multipart route has its own handler because SOFA only reads JSON, and that handler calls the
 * same service as the field.
 */
export interface RestRoute {
  method: HttpMethod;
  /** Below /api/v1, exactly as documented. */
  path: string;
  operation: `Query.${string}` | `Mutation.${string}`;
  summary: string;
  multipart?: {
    /** Describes the form parts for the OpenAPI document. */
    parts: Record<string, { description: string; binary?: boolean; required?: boolean }>;
    handle(services: AppServices, actor: Actor, req: Request, res: Response): Promise<unknown>;
    /** Also takes a JSON body (through SOFA, as any route): the multipart handler then serves multipart bodies only. */
    orJson?: boolean;
  };
  /** The JSON body's bound when it is not the default 1 MB (express's notation: `16mb`). */
  jsonBodyLimit?: string;
  /**
   * A GET's answers other than the JSON envelope, by the `format` query parameter (`?format=csv`): each writes the
   * whole response itself, after the route's token and argument checks. Without `format`, or `format=json`, SOFA
   * answers as for every route.
   */
  formats?: Record<string, RestFormat>;
}

export interface RestFormat {
  /** The media type the OpenAPI document names for it. */
  mediaType: string;
  send(services: AppServices, actor: Actor, req: Request, res: Response): Promise<void>;
}
