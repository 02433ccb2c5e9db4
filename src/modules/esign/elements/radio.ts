import { defineKind } from './element-kind';
import { optionProblem, planOptions } from './options';

/** A group of choices of which the signer picks one: the box holds one row per option, top to bottom. */
export const radio = defineKind({
  type: 'radio',
  size: { width: 160, height: 60 },
  source: 'signer',
  widget: 'radio',
  input: 'radio',
  planRules: (problems, field, input) => planOptions(problems, field, input, { min: 2, max: 20 }),
  valueProblem: optionProblem,
});
