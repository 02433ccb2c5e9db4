// A radio group: one of the sender's options. One Tab stop; the arrow keys move between options and choose.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { controlIdOf, describeInputs, initialOf, labelText, messageSlots } from './common.js';

export function draw(field) {
  const id = controlIdOf(field);
  const initial = initialOf(field);
  const radios = (field.options ?? []).map((option, index) =>
    h('input', {
      type: 'radio',
      name: id,
      value: option,
      id: index === 0 ? id : `${id}-${index}`,
      class: 'field-control',
      checked: option === initial,
    }),
  );
  const { hintEl, errorEl } = messageSlots(id, null);
  const legendId = `${id}-legend`;
  const wrapper = h(
    'fieldset',
    {
      class: 'field field--radio',
      dataset: { fieldId: field.field_id },
      'aria-describedby': `${id}-error`,
    },
    h('legend', { id: legendId }, ...labelText(field)),
    errorEl,
    h(
      'div',
      {
        class: 'radio-options',
        role: 'radiogroup',
        'aria-labelledby': legendId,
        'aria-required': field.required ? 'true' : null,
      },
      radios.map((radio) => h('div', { class: 'checkbox-row' }, radio, h('label', { for: radio.id }, radio.value))),
    ),
  );
  const chosen = () => radios.find((radio) => radio.checked)?.value ?? '';
  const entry = {
    field,
    wrapper,
    // The chosen option takes focus, as Tab would give it; none chosen: the first.
    get focusEl() {
      return radios.find((radio) => radio.checked) ?? radios[0];
    },
    inputs: radios,
    hintEl,
    errorEl,
    read: chosen,
    problem: () => {
      const value = chosen();
      if (value === '') return field.required ? t('fields.choose_option') : null;
      return field.options?.includes(value) ? null : t('fields.choose_option');
    },
  };
  describeInputs(entry);
  return entry;
}
