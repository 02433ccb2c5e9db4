import { defineKind } from './element-kind';
import { planTextRules, textProblem } from './text-rules';

/** The signer's name as they write it; the page offers the name the invite was sent to. */
export const name = defineKind({
  type: 'name',
  size: { width: 200, height: 20 },
  source: 'signer',
  widget: 'text',
  input: 'text',
  planRules: (problems, field, input) => planTextRules(problems, field, input, 200),
  valueProblem: textProblem,
  suggest: (person) => person.fullName,
});
