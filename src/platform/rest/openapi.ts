import { ERROR_STATUS } from '../errors';
import type { RestRoute } from './route';
import { REST_BASE, type OpenApiDocument } from './sofa';

const ENVELOPE_FIELDS = {
  status_code: { type: 'integer', description: 'The HTTP status, repeated.' },
  message: { type: 'string', description: '`Success`, or an error code (or a documented error text).' },
  success: { type: 'boolean' },
};

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['data', 'status_code', 'message', 'success'],
  properties: {
    data: { type: 'object', nullable: true, description: 'Always null on failure.' },
    ...ENVELOPE_FIELDS,
    errors: {
      type: 'array',
      description: 'Which inputs failed and why, where the failure concerns particular inputs.',
      items: {
        type: 'object',
        required: ['field', 'problem'],
        properties: { field: { type: 'string' }, problem: { type: 'string' } },
      },
    },
  },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (`bad_request`, `missing_fields` or an operation-specific code).',
  401: '`unauthorized`: missing, malformed, unknown, expired or revoked token.',
  404: '`not_found`: no such resource for this user.',
  413: '`payload_too_large`: a JSON body over 1 MiB.',
  429: '`rate_limited`: the quota of this token (or address) for the minute is spent; see `Retry-After` and `RateLimit`.',
  500: '`internal_error`: a fault of the service (logged with the request id returned in `x-request-id`).',
  503: '`service_unavailable`: busy (every worker thread taken, or the database momentarily); retry shortly.',
};

/**
 * SOFA's document describes bare GraphQL results; the service answers with the envelope, takes
 * multipart bodies on upload routes, and requires a bearer token. This rewrites the document to say so.
 */
export function patchOpenApi(generated: OpenApiDocument, routes: RestRoute[], publicUrl: string): OpenApiDocument {
  const document: OpenApiDocument = structuredClone(generated);
  document.info = {
    title: 'Esign API',
    version: '2.0.0',
    description:
      'Esign and E-Stamp service. Every JSON response is the envelope `{data, status_code, message, success}`; see docs/api.md.',
  };
  document.servers = [{ url: publicUrl }];
  document.security = [{ bearerAuth: [] }];
  document.components ??= {};
  document.components.securitySchemes = { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'esk_...' } };
  document.components.schemas ??= {};
  document.components.schemas.ErrorEnvelope = ERROR_ENVELOPE;

  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const fullPath = `${REST_BASE}${route.path}`;
    const method = route.method.toLowerCase();
    const operation = structuredClone(generated.paths[fullPath]?.[method] ?? generated.paths[route.path]?.[method]);
    if (!operation) throw new Error(`SOFA generated no OpenAPI operation for ${route.method} ${fullPath}`);
    operation.summary = route.summary;
    operation.operationId ??= route.operation.replace('.', '_');
    // SOFA lists every argument as a query parameter too; POST and PUT take the body only (the router drops
    // their query string), and uploads take their multipart parts.
    if (route.multipart || route.method === 'POST' || route.method === 'PUT') {
      operation.parameters = (operation.parameters ?? []).filter((parameter: { in?: string }) => parameter.in !== 'query');
    }
    const success = operation.responses?.['200']?.content?.['application/json']?.schema ?? {};
    operation.responses = {
      200: {
        description: 'Success',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['data', 'status_code', 'message', 'success'],
              properties: { data: success, ...ENVELOPE_FIELDS },
            },
          },
        },
      },
      ...Object.fromEntries(
        Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [
          status,
          { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
        ]),
      ),
    };
    if (route.formats) describeFormats(operation, route.formats);
    if (route.multipart) operation.requestBody = multipartBody(route.multipart, operation.requestBody);
    paths[fullPath] = { ...paths[fullPath], [method]: operation };
  }
  document.paths = paths;
  return document;
}

/** Codes the service can answer with, for docs and tests. */
export const KNOWN_ERROR_CODES = Object.keys(ERROR_STATUS);

/** A route's other answers (`?format=csv`): the parameter, and each media type beside the JSON envelope. */
function describeFormats(operation: OpenApiDocument['paths'][string][string], formats: NonNullable<RestRoute['formats']>): void {
  const names = Object.keys(formats);
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      name: 'format',
      in: 'query',
      required: false,
      description: `\`json\` (default, the envelope) or ${names.map((name) => `\`${name}\``).join(', ')}: that file instead.`,
      schema: { type: 'string', enum: ['json', ...names] },
    },
  ];
  for (const format of Object.values(formats))
    operation.responses[200].content[format.mediaType] = { schema: { type: 'string' } };
}

/** A multipart route's request body: its parts, beside SOFA's JSON body when the route takes JSON too. */
function multipartBody(multipart: NonNullable<RestRoute['multipart']>, generated: { content?: object } | undefined) {
  return {
    required: true,
    content: {
      ...(multipart.orJson ? generated?.content : undefined),
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: Object.entries(multipart.parts)
            .filter(([, part]) => part.required)
            .map(([name]) => name),
          properties: Object.fromEntries(
            Object.entries(multipart.parts).map(([name, part]) => [
              name,
              part.binary
                ? { type: 'string', format: 'binary', description: part.description }
                : { type: 'string', description: part.description },
            ]),
          ),
        },
      },
    },
  };
}
