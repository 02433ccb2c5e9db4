import { emailSchema } from '../../../platform/validation/problems';
import { defineKind } from './element-kind';

/** An email address the signer gives; the page offers the one the invite was sent to. */
export const email = defineKind({
  type: 'email',
  size: { width: 200, height: 20 },
  source: 'signer',
  widget: 'text',
  input: 'email',
  suggest: (person) => person.email,
  valueProblem: (_element, value) => (emailSchema.safeParse(value).success ? null : 'must be an email address'),
});
