import type { Problems } from '../../../platform/validation/problems';
import type { StoredElement } from './stored-element';
import type { ElementRuleInput, ElementRules } from './element-kind';

const OPTION_MAX_CHARACTERS = 100;

/** `options` of a radio group or a dropdown: distinct, non-blank texts, between `range.min` and `range.max` of them. */
export function planOptions(
  problems: Problems,
  field: string,
  input: ElementRuleInput,
  range: { min: number; max: number },
): Partial<ElementRules> {
  const options = input.options;
  if (options === undefined || options === null) {
    problems.missingField(`${field}.options`);
    return {};
  }
  if (!Array.isArray(options) || options.length < range.min || options.length > range.max) {
    problems.invalidField(`${field}.options`, `must be a list of ${range.min} to ${range.max} choices`);
    return {};
  }
  const trimmed = options.map((option) => (typeof option === 'string' ? option.trim() : ''));
  if (trimmed.some((option) => option.length === 0 || option.length > OPTION_MAX_CHARACTERS))
    problems.invalidField(`${field}.options`, `each choice is a text of 1 to ${OPTION_MAX_CHARACTERS} characters`);
  else if (new Set(trimmed).size !== trimmed.length) problems.invalidField(`${field}.options`, 'choices must differ');
  return { options: trimmed };
}

export const optionProblem = (element: StoredElement, value: string) =>
  element.options?.includes(value) ? null : `must be one of ${element.options?.join(', ')}`;
