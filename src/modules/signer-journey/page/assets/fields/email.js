// An email address; the invite's address is offered.

import { h } from '../dom.js';
import { initialOf, labelledEntry, typedProblem } from './common.js';
import { emailProblem } from './rules.js';

export function draw(field) {
  const control = h('input', { type: 'email', value: initialOf(field), autocomplete: 'email', spellcheck: 'false' });
  return labelledEntry(field, control, {
    read: () => control.value.trim(),
    problem: () => typedProblem(field, control.value, emailProblem),
  });
}
