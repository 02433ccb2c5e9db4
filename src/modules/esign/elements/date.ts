import { DATE_FORMATS, formatDate, parseIsoDate } from './date-formats';
import { defineKind } from './element-kind';

/** A date the signer picks, sent as `YYYY-MM-DD` and drawn in the element's `format` (DATE_FORMATS). */
export const date = defineKind({
  type: 'date',
  size: { width: 120, height: 20 },
  source: 'signer',
  widget: 'text',
  input: 'date',
  formats: DATE_FORMATS,
  valueProblem: (_element, value) => (parseIsoDate(value) ? null : 'must be a date written YYYY-MM-DD'),
  drawn: (element, value) => formatDate(value, element.format),
});
