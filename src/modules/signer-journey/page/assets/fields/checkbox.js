// A box to tick (Space toggles it); sent as true or false. A required one must be ticked (a consent).

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { controlIdOf, describeInputs, labelText, messageSlots } from './common.js';

export function draw(field) {
  const id = controlIdOf(field);
  const control = h('input', {
    type: 'checkbox',
    id,
    class: 'field-control',
    checked: field.value === 'true',
    'aria-required': field.required ? 'true' : null,
  });
  const { hintEl, errorEl } = messageSlots(id, null);
  const wrapper = h(
    'div',
    { class: 'field field--checkbox', dataset: { fieldId: field.field_id } },
    h('div', { class: 'checkbox-row' }, control, h('label', { for: id }, ...labelText(field))),
    errorEl,
  );
  const entry = {
    field,
    wrapper,
    focusEl: control,
    inputs: [control],
    hintEl,
    errorEl,
    read: () => control.checked,
    problem: () => (field.required && !control.checked ? t('fields.tick_box') : null),
  };
  describeInputs(entry);
  return entry;
}
