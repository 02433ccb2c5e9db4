import { defineKind } from './element-kind';
import { optionProblem, planOptions } from './options';

/** A list the signer picks one choice from. */
export const dropdown = defineKind({
  type: 'dropdown',
  size: { width: 160, height: 20 },
  source: 'signer',
  widget: 'choice',
  input: 'select',
  planRules: (problems, field, input) => planOptions(problems, field, input, { min: 1, max: 200 }),
  valueProblem: optionProblem,
});
