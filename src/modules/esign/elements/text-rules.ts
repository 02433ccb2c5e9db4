import { RE2JS } from 're2js';
import { text, type Problems } from '../../../platform/validation/problems';
import type { StoredElement } from './stored-element';
import { boundedWhole, characterCount, type ElementRuleInput, type ElementRules } from './element-kind';

/** The longest value any element keeps (a multi-line text's paragraphs). */
export const VALUE_MAX_CHARACTERS = 5000;
const PATTERN_MAX_CHARACTERS = 200;

/**
 * A `pattern` compiled with RE2 (re2js, a port of RE2 in JavaScript): matching takes time linear in the value, so a
 * pattern an owner writes cannot hold the event loop (a backtracking RegExp could, on one crafted value). The
 * signing page checks the same pattern with the browser's RegExp for early feedback; the service decides.
 */
function compilePattern(pattern: string): RE2JS | null {
  try {
    return RE2JS.compile(pattern);
  } catch {
    return null;
  }
}
const compiled = new Map<string, RE2JS | null>();
function patternOf(pattern: string): RE2JS | null {
  if (!compiled.has(pattern)) {
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, compilePattern(pattern));
  }
  return compiled.get(pattern)!;
}

/** The length and pattern rules of the kinds a signer types: min_length, max_length (at most `cap`), pattern. */
export function planTextRules(
  problems: Problems,
  field: string,
  input: ElementRuleInput,
  cap: number = VALUE_MAX_CHARACTERS,
): Partial<ElementRules> {
  const min_length = boundedWhole(problems, `${field}.min_length`, input.min_length, { min: 0, max: cap });
  const max_length = boundedWhole(problems, `${field}.max_length`, input.max_length, { min: 1, max: cap });
  if (min_length !== null && max_length !== null && min_length > max_length)
    problems.invalidField(`${field}.min_length`, 'must not be more than max_length');
  const pattern = text(problems, `${field}.pattern`, input.pattern, PATTERN_MAX_CHARACTERS) ?? null;
  if (pattern !== null && (!patternOf(pattern) || !browserAccepts(pattern)))
    problems.invalidField(`${field}.pattern`, 'must be a regular expression in RE2 syntax that browsers also accept');
  return { min_length, max_length: max_length ?? cap, pattern };
}

function browserAccepts(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

/** The length and pattern problems of a typed value (the whole value must match the pattern). */
export function textProblem(element: StoredElement, value: string): string | null {
  const length = characterCount(value);
  if (element.min_length && length < element.min_length) return `at least ${element.min_length} characters`;
  if (element.max_length && length > element.max_length) return `at most ${element.max_length} characters`;
  if (element.pattern && !patternOf(element.pattern)?.matches(value)) return `must match the pattern ${element.pattern}`;
  return null;
}
