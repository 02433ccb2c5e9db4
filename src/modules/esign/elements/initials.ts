import { defineKind } from './element-kind';
import { planTextRules, textProblem } from './text-rules';

/**
 * The signer's initials (the page offers them from the signer's name); with `every_page`, at the same place on every
 * page of the uploaded document (not on prefixed stamp pages).
 */
export const initials = defineKind({
  type: 'initials',
  size: { width: 60, height: 24 },
  source: 'signer',
  widget: 'text',
  input: 'text',
  planRules: (problems, field, input) => ({
    ...planTextRules(problems, field, input, 20),
    every_page: input.every_page === true,
  }),
  valueProblem: textProblem,
  suggest: (person) => initialsOf(person.fullName),
});

/** The first letter of each word, in capitals ("Ravi Kumar Sharma" → "RKS"), any script. */
export function initialsOf(fullName: string): string {
  return fullName
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => [...word][0]!.toLocaleUpperCase('en-IN'))
    .join('')
    .slice(0, 20);
}
