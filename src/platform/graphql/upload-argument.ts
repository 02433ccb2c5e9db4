import type { MiddlewareFn } from 'type-graphql';

/**
 * An `Upload` argument is graphql-upload-ts's promise of the part; TypeGraphQL awaits it while it gathers the
 * arguments, before the resolver runs. A request that ended before the part began (or whose multipart parser
 * failed) rejects it with a bare busboy or http-errors error, which would answer `internal_error`: awaited
 * here first, it answers the refusal `refusalOf` makes of it (`bad_request`, `file_too_large`), as REST does.
 */
export function refuseFailedUpload(refusalOf: (error: unknown) => unknown, argument = 'file'): MiddlewareFn {
  return async ({ args }, next) => {
    try {
      await (args as Record<string, unknown>)[argument];
    } catch (error) {
      throw refusalOf(error);
    }
    return next();
  };
}

/** graphql-upload-ts fails a part (or its stream) this way when its own size cap is passed. */
export function isUploadSizeLimit(error: unknown): boolean {
  const e = error as { code?: unknown; status?: unknown } | undefined;
  return e?.code === 'FILE_TOO_LARGE' || e?.status === 413;
}
