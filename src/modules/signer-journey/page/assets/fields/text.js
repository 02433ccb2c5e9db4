// One line of text: a text field, a name, initials.

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { textProblem } from './rules.js';

const AUTOCOMPLETE = { name: 'name' };

export function draw(field) {
  const control = h('input', {
    type: 'text',
    value: initialOf(field),
    autocomplete: AUTOCOMPLETE[field.type] ?? 'off',
    spellcheck: field.type === 'text' ? null : 'false',
  });
  return labelledEntry(field, control, {
    read: () => control.value.trim(),
    problem: () => typedProblem(field, control.value, textProblem),
  });
}
