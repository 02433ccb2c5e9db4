// A field the signer sees but does not fill: the sender's read-only value, or one the service fills (the date of
// signing). Shown as text; it can take focus (the document's box leads here) but is not a control.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { controlIdOf, labelOf } from './common.js';

function shownValue(field) {
  if (field.input === null) return field.value ?? t('fields.filled_when_signing');
  if (field.input === 'image') return field.value ? t('fields.image_from_sender') : t('fields.no_image');
  if (field.input === 'checkbox') return field.value === 'true' ? t('fields.ticked') : t('fields.not_ticked');
  return field.value ?? t('fields.empty');
}

export function draw(field) {
  const id = controlIdOf(field);
  const wrapper = h(
    'div',
    { class: 'field field--readonly', id, tabindex: '-1', dataset: { fieldId: field.field_id } },
    h('p', { class: 'field-readonly__label', id: `${id}-label` }, labelOf(field)),
    h('p', { class: 'field-readonly__value', 'aria-describedby': `${id}-label` }, shownValue(field)),
  );
  return { field, wrapper, focusEl: wrapper, inputs: [], read: () => undefined, problem: () => null, errorEl: null };
}
