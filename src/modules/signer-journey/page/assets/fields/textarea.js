// Several lines of text (a text field with `multiline`); Enter starts a new line here, the button submits.

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { textProblem } from './rules.js';

export function draw(field) {
  const control = h('textarea', { rows: '4', autocomplete: 'off' });
  control.value = initialOf(field);
  return labelledEntry(field, control, {
    read: () => control.value.trim(),
    problem: () => typedProblem(field, control.value, textProblem),
  });
}
