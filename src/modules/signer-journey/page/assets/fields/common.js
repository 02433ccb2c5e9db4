// What every field control shares: its visible label (the sender's, else one that says what the kind is), the
// "(required)" mark in words, a hint, and an error slot tied to the control with aria-describedby. A control module
// (one per `input`, listed in index.js) builds its element and gives back an entry:
//   { field, wrapper, focusEl, inputs, read(), problem(), hintEl, errorEl }
// `read()` is the value to send (undefined: nothing to send), `problem()` the browser's own check of the rules.

import { h } from '../dom.js';
import { t } from '../i18n.js';

/** The label of a field the sender did not name, by its type: the key of its message. */
const DEFAULT_LABELS = {
  initials: 'fields.label_initials',
  text: 'fields.label_text',
  number: 'fields.label_number',
  date: 'fields.label_date',
  checkbox: 'fields.label_checkbox',
  radio: 'fields.label_radio',
  dropdown: 'fields.label_dropdown',
  name: 'fields.label_name',
  email: 'fields.label_email',
  seal: 'fields.label_seal',
  date_signed: 'fields.label_date_signed',
};

export const labelOf = (field) =>
  field.label?.trim() || (DEFAULT_LABELS[field.type] ? t(DEFAULT_LABELS[field.type]) : t('fields.label_field'));

/** The id of the field's first control (the document view's boxes focus it). */
export const controlIdOf = (field) => `field-${field.field_id}`;

/** The label's children: its text and, for a required field, the word saying so (not a colour or star alone). */
export function labelText(field) {
  return [labelOf(field), field.required ? h('span', { class: 'field-required' }, ` ${t('fields.required_mark')}`) : null];
}

/** A rule's number as the sender set it (1000, not 1,000), for a message. */
const figure = (value) => String(value);

/** The hint under the label: the rules a signer can read before typing (length, range). */
export function rulesHint(field) {
  const parts = [];
  if (field.min_length && field.max_length)
    parts.push(t('fields.hint_length_between', { min: field.min_length, max: field.max_length }));
  else if (field.max_length && field.input !== 'textarea' && field.max_length < 5000)
    parts.push(t('fields.hint_length_max', { max: field.max_length }));
  else if (field.min_length) parts.push(t('fields.hint_length_min', { min: field.min_length }));
  if (field.min !== null && field.max !== null)
    parts.push(t('fields.hint_range', { min: figure(field.min), max: figure(field.max) }));
  else if (field.min !== null) parts.push(t('fields.hint_min', { min: figure(field.min) }));
  else if (field.max !== null) parts.push(t('fields.hint_max', { max: figure(field.max) }));
  if (field.format === 'integer') parts.push(t('fields.hint_integer'));
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

/** What a required field left blank says. */
export const requiredText = () => t('fields.required');

/** A blank value is a problem only when the field is required; otherwise the kind's rule judges it. */
export const typedProblem = (field, value, rule) =>
  isBlank(value) ? (field.required ? requiredText() : null) : rule(field, value.trim());
