// A number, sent as the decimal text typed (the service keeps it as given, so nothing is rounded).

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { numberProblem } from './rules.js';

export function draw(field) {
  const control = h('input', {
    type: 'number',
    value: initialOf(field),
    inputmode: field.format === 'integer' ? 'numeric' : 'decimal',
    step: field.format === 'integer' ? '1' : 'any',
    min: field.min ?? null,
    max: field.max ?? null,
    autocomplete: 'off',
  });
  return labelledEntry(field, control, {
    read: () => control.value.trim(),
    // A number input reports text it cannot read as an empty value: say so rather than "required".
    problem: () =>
      control.validity.badInput ? numberProblem(field, 'not a number') : typedProblem(field, control.value, numberProblem),
  });
}
