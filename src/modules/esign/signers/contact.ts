import { Problems, emailSchema, text } from '../../../platform/validation/problems';

/**
 * A signer's email, mobile and country code, read and checked the same wherever they are given (initialize-esign,
 * reassign-signer): `prefix` names the fields (`signers[0].` or none), `kept` is what stands when one is not given.
 * The country code keeps its `+` here; the caller stores it without.
 */
export function planContact(
  problems: Problems,
  prefix: string,
  input: { email?: string | null; mobile?: string | null; country_code?: string | null },
  kept: { email?: string | null; mobile?: string | null; countryCode?: string | null } = {},
): { email?: string; mobile?: string; countryCode?: string } {
  const email = text(problems, `${prefix}email`, input.email, 320) ?? kept.email ?? undefined;
  if (email !== undefined && !emailSchema.safeParse(email).success)
    problems.invalidField(`${prefix}email`, 'must be an email address');
  const mobile = text(problems, `${prefix}mobile`, input.mobile, 20) ?? kept.mobile ?? undefined;
  if (mobile !== undefined && !/^\d{6,15}$/.test(mobile)) problems.invalidField(`${prefix}mobile`, 'must be 6 to 15 digits');
  const countryCode = text(problems, `${prefix}country_code`, input.country_code, 8) ?? kept.countryCode ?? undefined;
  if (countryCode !== undefined && !/^\+?\d{1,4}$/.test(countryCode))
    problems.invalidField(`${prefix}country_code`, 'must be 1 to 4 digits, optionally after +');
  if (mobile !== undefined && countryCode === undefined) problems.missingField(`${prefix}country_code`);
  return { email, mobile, countryCode };
}
