import { DATE_FORMATS, formatDate, inIst } from './date-formats';
import { defineKind } from './element-kind';

/**
 * Filled by the service when the signer signs: the date in the element's `format` and the time, in India Standard
 * Time and saying so ("27/11/2026 14:05 IST"). The signer enters nothing and the owner cannot prefill it.
 */
export const dateSigned = defineKind({
  type: 'date_signed',
  size: { width: 140, height: 20 },
  source: 'service',
  widget: 'text',
  formats: DATE_FORMATS,
  drawn: (element, _value, { signedAt }) => {
    const { date, time } = inIst(signedAt);
    return `${formatDate(date, element.format)} ${time} IST`;
  },
});
