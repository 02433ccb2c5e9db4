// What every field control shares: its visible label (the sender's, else one that says what the kind is), the
// "(required)" mark in words, a hint, and an error slot tied to the control with aria-describedby. A control module
// (one per `input`, listed in index.js) builds its element and gives back an entry:
//   { field, wrapper, focusEl, inputs, read(), problem(), hintEl, errorEl }
// `read()` is the value to send (undefined: nothing to send), `problem()` the browser's own check of the rules.

import { h } from '../dom.js';

const DEFAULT_LABELS = {
  initials: 'Your initials',
  text: 'Text',
  number: 'Number',
  date: 'Date',
  checkbox: 'Tick to confirm',
  radio: 'Choose one',
  dropdown: 'Choose one',
  name: 'Your full name',
  email: 'Your email address',
  seal: 'Company seal',
  date_signed: 'Date of signing',
};

export const labelOf = (field) => field.label?.trim() || DEFAULT_LABELS[field.type] || 'Field';

/** The id of the field's first control (the document view's boxes focus it). */
export const controlIdOf = (field) => `field-${field.field_id}`;

/** The label's children: its text and, for a required field, the word saying so (not a colour or star alone). */
export function labelText(field) {
  return [labelOf(field), field.required ? h('span', { class: 'field-required' }, ' (required)') : null];
}

/** The hint under the label: the rules a signer can read before typing (length, range). */
export function rulesHint(field) {
  const parts = [];
  if (field.min_length && field.max_length) parts.push(`${field.min_length} to ${field.max_length} characters.`);
  else if (field.max_length && field.input !== 'textarea' && field.max_length < 5000)
    parts.push(`Up to ${field.max_length} characters.`);
  else if (field.min_length) parts.push(`At least ${field.min_length} characters.`);
  if (field.min !== null && field.max !== null) parts.push(`From ${field.min} to ${field.max}.`);
  else if (field.min !== null) parts.push(`At least ${field.min}.`);
  else if (field.max !== null) parts.push(`At most ${field.max}.`);
  if (field.format === 'integer') parts.push('A whole number.');
  return parts.join(' ');
}

/** The hint and error elements of a field, with ids derived from its control's id. */
export function messageSlots(id, hintText) {
  const hintEl = hintText ? h('p', { class: 'hint', id: `${id}-hint` }, hintText) : null;
  const errorEl = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  return { hintEl, errorEl };
}

/** What a control's inputs are described by: the hint, and the error while one shows. */
export function describeInputs(entry) {
  const ids = [entry.hintEl?.id, entry.errorEl.hidden ? null : entry.errorEl.id].filter(Boolean);
  for (const input of entry.inputs) {
    if (ids.length) input.setAttribute('aria-describedby', ids.join(' '));
    else input.removeAttribute('aria-describedby');
  }
}

export function showEntryError(entry, message) {
  entry.errorEl.textContent = message;
  entry.errorEl.hidden = false;
  for (const input of entry.inputs) input.setAttribute('aria-invalid', 'true');
  describeInputs(entry);
}

export function clearEntryError(entry) {
  entry.errorEl.textContent = '';
  entry.errorEl.hidden = true;
  for (const input of entry.inputs) input.removeAttribute('aria-invalid');
  describeInputs(entry);
}

/** The value the control starts with: what is stored, else what the service suggests (the invite's name...). */
export const initialOf = (field) => field.value ?? field.suggestion ?? '';

/**
 * A labelled single control (input, textarea, select) in its wrapper, label first, then hint, error, control;
 * the entry's `read` and `problem` are the caller's.
 */
export function labelledEntry(field, control, { read, problem }) {
  const id = controlIdOf(field);
  control.id = id;
  control.classList.add('field-control');
  if (field.required) control.setAttribute('aria-required', 'true');
  const { hintEl, errorEl } = messageSlots(id, rulesHint(field));
  const wrapper = h(
    'div',
    { class: `field field--${field.input}`, dataset: { fieldId: field.field_id } },
    h('label', { for: id }, ...labelText(field)),
    hintEl,
    errorEl,
    control,
  );
  const entry = { field, wrapper, focusEl: control, inputs: [control], read, problem, hintEl, errorEl };
  describeInputs(entry);
  return entry;
}

/** Nothing typed (spaces count as nothing: the service trims). */
export const isBlank = (value) => value.trim() === '';

export const REQUIRED_TEXT = 'Fill in this field.';

/** A blank value is a problem only when the field is required; otherwise the kind's rule judges it. */
export const typedProblem = (field, value, rule) =>
  isBlank(value) ? (field.required ? REQUIRED_TEXT : null) : rule(field, value.trim());
