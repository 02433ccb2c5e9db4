import { AppError } from '../../platform/errors';
import { csvLine } from '../../platform/csv';
import { receiveMultipartFile } from '../../platform/rest/multipart';
import type { RestFormat, RestRoute } from '../../platform/rest/route';
import type { BulkOptions } from './bulk-rows';
import { allBulkRows, bulkView, getOwnBulk } from './read-bulks';
import { startCsvBulk } from './start-bulk';

/** The columns of a bulk's rows as CSV (bulk-rows?format=csv). */
const ROW_COLUMNS = ['position', 'key', 'status', 'session_id', 'session_status', 'error_code', 'error_message', 'error_fields'];

/** `?format=csv` of bulk-rows: every row of the bulk with what it became, streamed a thousand rows at a time. */
const bulkRowsAsCsv: RestFormat = {
  mediaType: 'text/csv',
  async send(services, actor, req, res) {
    const em = services.orm.em.fork();
    const bulk = await getOwnBulk(em, actor, typeof req.query.client_id === 'string' ? req.query.client_id : null);
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${bulk.id}-rows.csv"`);
    res.write(csvLine(ROW_COLUMNS));
    for await (const rows of allBulkRows(em, bulk.id)) {
      const lines = rows.map((row) =>
        csvLine([
          String(row.position),
          row.key ?? '',
          row.status,
          row.session_id ?? '',
          row.session_status ?? '',
          row.error?.code ?? '',
          row.error?.message ?? '',
          (row.error?.errors ?? [])
            .map((problem: { field: string; problem: string }) => `${problem.field}: ${problem.problem}`)
            .join('; '),
        ]),
      );
      // Written as the client reads: a slow reader holds the next read of rows, not the process's memory.
      if (!res.write(lines.join(''))) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  },
};

/**
 * A CSV upload: the form's `template_id` (and optional `options`, the session options as a JSON object) come
 * before the `file` part, which is parsed as it arrives (csv-rows.ts).
 */
const csvUpload: NonNullable<RestRoute['multipart']> = {
  orJson: true,
  parts: {
    template_id: { description: 'The template every row is sent from (before the file part).', required: true },
    options: { description: 'Optional: the session options every row gets, as a JSON object (before the file part).' },
    file: { description: 'The rows as CSV (docs/bulk.md), at most 10,000 rows.', binary: true, required: true },
  },
  async handle(services, actor, req) {
    const received = await receiveMultipartFile(req);
    if (!received) throw AppError.missingFields(['file']);
    try {
      const em = services.orm.em.fork();
      const request = { template_id: received.fields.template_id, options: optionsOf(received.fields.options) };
      const bulk = await startCsvBulk(services, em, actor, request, received.stream);
      await received.complete;
      return bulkView(em, bulk);
    } finally {
      received.release();
    }
  },
};

function optionsOf(text: string | undefined): BulkOptions {
  if (!text?.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw AppError.badRequest([{ field: 'options', problem: 'malformed JSON' }]);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw AppError.badRequest([{ field: 'options', problem: 'must be a JSON object' }]);
  return parsed as BulkOptions;
}

export const bulkRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/esign/bulk-send',
    operation: 'Mutation.bulkSend',
    summary:
      'Send a template to many recipients, one session per row: JSON `rows` (up to 10,000) or a CSV upload (multipart); answers at once with the bulk (added by this service).',
    multipart: csvUpload,
    jsonBodyLimit: '16mb',
  },
  {
    method: 'GET',
    path: '/esign/bulk-status',
    operation: 'Query.bulk',
    summary: 'A bulk: its rows and the sessions it made, by state (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/bulk-list',
    operation: 'Query.bulks',
    summary: 'Your bulks, newest first (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/bulk-rows',
    operation: 'Query.bulkRows',
    summary: 'A page of a bulk’s rows with their session or error; `format=csv`: every row as CSV (added by this service).',
    formats: { csv: bulkRowsAsCsv },
  },
  {
    method: 'POST',
    path: '/esign/bulk-cancel',
    operation: 'Mutation.cancelBulk',
    summary: 'Cancel a bulk: rows not yet made are skipped, the sessions made are cancelled (added by this service).',
  },
];
