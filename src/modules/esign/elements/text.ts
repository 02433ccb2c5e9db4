import { defineKind } from './element-kind';
import { planTextRules, textProblem } from './text-rules';

/** Text the signer types: one line, or several with `multiline` (wrapped to the box). */
export const textKind = defineKind({
  type: 'text',
  size: { width: 200, height: 20 },
  source: 'signer',
  widget: 'text',
  input: 'text',
  planRules: (problems, field, input) => ({ ...planTextRules(problems, field, input), multiline: input.multiline === true }),
  valueProblem: textProblem,
});
