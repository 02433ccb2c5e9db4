// A date, picked or typed in the browser's date control; its value is YYYY-MM-DD, what the service takes.

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { dateProblem } from './rules.js';

export function draw(field) {
  const control = h('input', { type: 'date', value: initialOf(field), autocomplete: 'off' });
  return labelledEntry(field, control, {
    read: () => control.value,
    // Half a date typed reads as empty: say it is incomplete rather than "required".
    problem: () => (control.validity.badInput ? dateProblem(field, '') : typedProblem(field, control.value, dateProblem)),
  });
}
