// A dropdown: one of the sender's options, or none while the field is optional.

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { optionProblem } from './rules.js';

export function draw(field) {
  const initial = initialOf(field);
  const control = h(
    'select',
    {},
    h('option', { value: '' }, 'Choose an option'),
    (field.options ?? []).map((option) => h('option', { value: option, selected: option === initial }, option)),
  );
  return labelledEntry(field, control, {
    read: () => control.value,
    problem: () =>
      control.value === '' && field.required ? 'Choose one of the options.' : typedProblem(field, control.value, optionProblem),
  });
}
