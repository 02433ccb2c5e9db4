import { csvLine } from '../../../platform/csv';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../platform/auth/actor';
import type { AppServices } from '../../../platform/services';
import { Signer } from '../esign-session.entity';
import { signerFieldValues, type FieldValue } from '../elements/field-values';
import { getOwnSession } from '../session/own-session';

export interface SessionFieldValues {
  client_id: string;
  fields: FieldValue[];
}

/** The values of every field of one of the caller's sessions (404 otherwise), signer by signer, in element order. */
export async function readFieldValues(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<SessionFieldValues> {
  const session = await getOwnSession(services, em, actor, clientId);
  const signers = await em.find(Signer, { session }, { orderBy: { position: 'asc' } });
  return { client_id: session.id, fields: signers.flatMap(signerFieldValues) };
}

export const FIELD_VALUE_COLUMNS = [
  'field_id',
  'signer_id',
  'signer_position',
  'type',
  'label',
  'value',
  'shown',
  'filled_at',
  'filled_by',
] as const satisfies readonly (keyof FieldValue)[];

/**
 * The rows as CSV (RFC 4180: CRLF line ends, every cell quoted when it holds a quote, comma or line break). A cell
 * that a spreadsheet would read as a formula (starting with = + - @, tab or carriage return) gets a leading `'`, so
 * that a signer's text never runs in the owner's spreadsheet; null is an empty cell. The apostrophe is the one change
 * made to a value: the JSON answer keeps it as given.
 */
export function fieldValuesCsv(fields: readonly FieldValue[]): string {
  const rows = [
    [...FIELD_VALUE_COLUMNS],
    ...fields.map((field) => FIELD_VALUE_COLUMNS.map((column) => (field[column] === null ? '' : String(field[column])))),
  ];
  return rows.map(csvLine).join('');
}
