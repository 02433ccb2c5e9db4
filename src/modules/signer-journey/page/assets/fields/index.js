// The controls of the fields step, one module per `input` the service names (signer-form.ts): a new kind of
// control is one file here and one line in this list. Read-only fields and those the service fills show as text.

import * as checkbox from './checkbox.js';
import * as date from './date.js';
import * as email from './email.js';
import * as image from './image.js';
import * as number from './number.js';
import * as radio from './radio.js';
import * as readonly from './readonly.js';
import * as select from './select.js';
import * as text from './text.js';
import * as textarea from './textarea.js';

const CONTROLS = { text, textarea, number, date, checkbox, radio, select, email, image };

/** The control for one field of `signer.form`; `env.failed(error)` handles errors that changed the session. */
export function drawField(field, env) {
  const input = field.input === 'text' && field.multiline ? 'textarea' : field.input;
  const control = field.read_only ? undefined : CONTROLS[input];
  return (control ?? readonly).draw(field, env);
}

/** A field the signer fills (read-only ones and the service's are only shown). */
export const isFillable = (field) => !field.read_only && Boolean(CONTROLS[field.input]);

export { clearEntryError, labelOf, requiredText, showEntryError } from './common.js';
export { serviceValueProblem } from './rules.js';
