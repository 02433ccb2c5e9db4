/**
 * The most one GraphQL request may weigh, whichever way it comes: a JSON body on `/graphql`, the `operations`
 * and `map` fields of a multipart upload, or one graphql-ws message. One number, so that no transport accepts
 * what another refuses (ws alone would take 100 MiB by default).
 */
export const GRAPHQL_MAX_REQUEST_BYTES = 1024 * 1024;
