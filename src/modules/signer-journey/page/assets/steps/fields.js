// The fields step: every field of the signer's form as a labelled control (fields/index.js draws each), checked in
// the browser by the service's rules, then sent together in one request; the service's refusals come back to the
// controls they name. Read-only fields and the date of signing are shown as text.

import { ApiError, describeError, postJson, sentence } from '../api.js';
import { actionError, announce, busy, h } from '../dom.js';
import {
  clearEntryError,
  drawField,
  isFillable,
  labelOf,
  requiredText,
  serviceValueProblem,
  showEntryError,
} from '../fields/index.js';
import { t } from '../i18n.js';

/** The form has something to show this signer (a field to fill, or one to see). */
export const hasFields = (view) => Array.isArray(view.signer.form) && view.signer.form.length > 0;

let shownEntries = [];

/** The document view's box for a field: focus its control, if the fields step is on screen. */
export function focusField(fieldId) {
  const entry = shownEntries.find((candidate) => candidate.field.field_id === fieldId && candidate.wrapper.isConnected);
  if (!entry) return false;
  entry.focusEl.focus();
  entry.wrapper.scrollIntoView({ block: 'center' });
  return true;
}

/** Shows each problem next to its control; says how many and focuses the first. */
function showProblems(entries, problems, error) {
  for (const [entry, message] of problems) showEntryError(entry, message);
  const [first] = problems;
  const labels = problems.map(([entry]) => labelOf(entry.field)).join(', ');
  const summary =
    problems.length === 1
      ? t('fields.problem_one', { label: labels, problem: first[1] })
      : t('fields.problems_many', { count: problems.length, labels });
  error.show(summary);
  announce(summary, { assertive: true });
  first[0].focusEl.focus();
}

/**
 * The service's problem with a value, in the page's words: "required", else what the browser's own check of the
 * field's rules says now, else the service's known problems; an unknown one is shown as the service wrote it.
 */
function serviceProblemText(entry, problem) {
  if (problem === 'required') return requiredText();
  const own = entry.problem();
  if (own) return own;
  return serviceValueProblem(problem) ?? sentence(problem);
}

/** The service's problems (`values.<field_id>`) on the controls they name; the rest in the step's error slot. */
function showServiceErrors(entries, failure, error, submit) {
  const named = [];
  for (const entry of entries) {
    const problem = failure.problemFor(`values.${entry.field.field_id}`);
    if (problem) named.push([entry, serviceProblemText(entry, problem)]);
  }
  if (named.length) showProblems(entries, named, error);
  else {
    const message = describeError(failure);
    error.show(message);
    announce(message, { assertive: true });
    submit.focus();
  }
}

/**
 * `done(view)` continues with the service's answer (the signer view); `failure` is a refusal to show on arrival (a
 * signature refused for missing fields).
 */
export function fieldsStep(ctx, view, { done, failure } = {}) {
  const heading = ctx.heading(t('fields.heading'));
  const form = view.signer.form;
  const entries = form.map((field) => drawField(field, { failed: ctx.failed }));
  shownEntries = entries;
  const fillable = entries.filter((entry) => isFillable(entry.field));
  const intro = fillable.length ? t('fields.intro_fill') : t('fields.intro_shown');
  const submit = h('button', { type: 'submit', class: 'button button--primary' }, t('fields.continue'));
  const error = actionError();
  const stepForm = h(
    'form',
    { class: 'stack fields-form', novalidate: true },
    entries.map((entry) => entry.wrapper),
    submit,
    error.el,
  );
  stepForm.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    for (const entry of fillable) clearEntryError(entry);
    const problems = fillable.map((entry) => [entry, entry.problem()]).filter(([, problem]) => problem);
    if (problems.length) return showProblems(entries, problems, error);
    const values = Object.fromEntries(
      fillable.map((entry) => [entry.field.field_id, entry.read()]).filter(([, value]) => value !== undefined),
    );
    if (Object.keys(values).length === 0) return done(view);
    busy(submit, t('fields.saving'), async () => {
      try {
        done(await postJson('/fields', { values }));
      } catch (failed) {
        if (ctx.failed(failed)) return;
        if (failed instanceof ApiError) showServiceErrors(entries, failed, error, submit);
        else error.show(describeError(failed));
      }
    });
  });
  if (failure) queueMicrotask(() => showServiceErrors(entries, failure, error, submit));
  return h('div', { class: 'step', dataset: { step: 'fields' } }, heading, h('p', {}, intro), stepForm);
}
