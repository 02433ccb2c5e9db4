// A dropdown: one of the sender's options, or none while the field is optional.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { optionProblem } from './rules.js';

export function draw(field) {
  const initial = initialOf(field);
  const control = h(
    'select',
    {},
    h('option', { value: '' }, t('fields.choose_an_option')),
    (field.options ?? []).map((option) => h('option', { value: option, selected: option === initial }, option)),
  );
  return labelledEntry(field, control, {
    read: () => control.value,
    problem: () =>
      control.value === '' && field.required ? t('fields.choose_option') : typedProblem(field, control.value, optionProblem),
  });
}
