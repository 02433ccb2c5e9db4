import { Transform, type Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { AppError } from '../../platform/errors';
import type { Template } from '../templates';
import type { BulkRowRequest, BulkSignerContact } from './bulk-rows';

/** A CSV upload of a bulk is at most this big (10,000 rows of a few hundred bytes fit many times over). */
export const MAX_CSV_BYTES = 32 * 1024 * 1024;
/** A record longer than this is refused: no cell of a bulk is that long. */
const MAX_RECORD_BYTES = 64 * 1024;

const SIGNER_COLUMN = /^signer_(\d+)_(full_name|email|mobile|country_code|language)$/;
const STAMP_COLUMNS = ['amount', 'state_code', 'article_id', 'first_party_name', 'second_party_name', 'mock', 'document'];

/** What a CSV column fills in a row. */
type Column =
  | { kind: 'key' }
  | { kind: 'signer'; index: number; field: keyof BulkSignerContact }
  | { kind: 'value'; fieldId: string }
  | { kind: 'stamp'; field: string };

const refuse = (problem: string) => new AppError('bad_request', { errors: [{ field: 'file', problem }] });

/**
 * The columns of a bulk CSV, from its header (docs/bulk.md): `key`; `signer_<n>_full_name`, `_email`, `_mobile`,
 * `_country_code`, `_language` for the template's n-th signer (from 1); a template field by its label, or by its `field_id` (a
 * label that several fields share must be given as the field_id); `stamp_<field>` for the row's stamp (amount flow).
 * An unknown or repeated column refuses the upload, naming it.
 */
export function csvColumns(header: string[], template: Pick<Template, 'signers'>): Column[] {
  const byLabel = new Map<string, string[]>();
  const fieldIds = new Set<string>();
  for (const element of template.signers.flatMap((signer) => signer.elements)) {
    fieldIds.add(element.field_id);
    const label = (element as { label?: string | null }).label?.trim();
    if (label) byLabel.set(label, [...(byLabel.get(label) ?? []), element.field_id]);
  }
  const seen = new Set<string>();
  return header.map((raw) => {
    const name = raw.trim();
    if (seen.has(name)) throw refuse(`column "${name}" is given twice`);
    seen.add(name);
    if (name === 'key') return { kind: 'key' };
    const signer = SIGNER_COLUMN.exec(name);
    if (signer) return { kind: 'signer', index: Number(signer[1]) - 1, field: signer[2] as keyof BulkSignerContact };
    if (name.startsWith('stamp_') && STAMP_COLUMNS.includes(name.slice(6))) return { kind: 'stamp', field: name.slice(6) };
    if (fieldIds.has(name)) return { kind: 'value', fieldId: name };
    const labelled = byLabel.get(name);
    if (labelled?.length === 1) return { kind: 'value', fieldId: labelled[0]! };
    if (labelled) throw refuse(`column "${name}": ${labelled.length} fields have this label; name the column by field_id`);
    throw refuse(`column "${name}" is neither key, signer_<n>_<contact>, stamp_<field>, nor a field's label or field_id`);
  });
}

/** One CSV record as a bulk row; an empty cell gives nothing. */
function rowOf(columns: Column[], record: string[]): BulkRowRequest {
  const row: BulkRowRequest = {};
  const signers: BulkSignerContact[] = [];
  const values: Record<string, unknown> = {};
  const stamp: Record<string, unknown> = {};
  columns.forEach((column, index) => {
    const cell = record[index]?.trim() ?? '';
    if (cell === '') return;
    if (column.kind === 'key') row.key = cell;
    else if (column.kind === 'signer') (signers[column.index] ??= {})[column.field] = cell;
    else if (column.kind === 'value') values[column.fieldId] = cell;
    else stamp[column.field] = stampValue(column.field, cell);
  });
  if (signers.length > 0) row.signers = Array.from(signers, (signer) => signer ?? {});
  if (Object.keys(values).length > 0) row.element_values = values;
  if (Object.keys(stamp).length > 0) row.stamp = stamp;
  return row;
}

/** `mock` is a yes/no and `document` an index; a cell that is neither stays text, for the row's check to name. */
function stampValue(field: string, cell: string): unknown {
  if (field === 'mock' && /^(true|false)$/i.test(cell)) return cell.toLowerCase() === 'true';
  if (field === 'document' && /^\d+$/.test(cell)) return Number(cell);
  return cell;
}

/** Counts the bytes going through and refuses the upload past MAX_CSV_BYTES. */
function sizeLimit(): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > MAX_CSV_BYTES) done(refuse(`at most ${MAX_CSV_BYTES} bytes`));
      else done(null, chunk);
    },
  });
}

/**
 * The rows of a CSV upload, as it streams (never held whole): the header first, then one row per record. A record
 * whose cell count differs from the header's, or a malformed CSV, refuses the upload with the line it is on.
 */
export async function* csvRows(stream: Readable, template: Pick<Template, 'signers'>): AsyncGenerator<BulkRowRequest> {
  const parser = parse({ bom: true, max_record_size: MAX_RECORD_BYTES, skip_empty_lines: true, relax_column_count: false });
  const limited = sizeLimit();
  const fail = (error: unknown) => parser.destroy(error instanceof Error ? error : new Error(String(error)));
  limited.on('error', fail);
  stream.on('error', fail);
  stream.pipe(limited).pipe(parser);
  let columns: Column[] | null = null;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!columns) columns = csvColumns(record, template);
      else yield rowOf(columns, record);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw refuse(`not a CSV this service reads: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    stream.unpipe(limited);
    stream.resume();
  }
  if (!columns) throw refuse('the CSV is empty: a header row is required');
}
