import { defineKind } from './element-kind';

/** A box the signer ticks: `true` or `false`; `required` means it must be ticked (a consent box). */
export const checkbox = defineKind({
  type: 'checkbox',
  size: { width: 14, height: 14 },
  source: 'signer',
  widget: 'checkbox',
  input: 'checkbox',
  valueProblem: (element, value) => {
    if (value !== 'true' && value !== 'false') return 'must be true or false';
    return element.required && value !== 'true' ? 'must be ticked' : null;
  },
});
