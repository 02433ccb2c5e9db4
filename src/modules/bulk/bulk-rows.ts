import type { NotificationInput, StampRequestInput } from '../esign';
import type { InitializeFromTemplateRequest, Template } from '../templates';

/** What a bulk row may say about each template signer: who they are and how to reach them. */
export interface BulkSignerContact {
  full_name?: string | null;
  email?: string | null;
  mobile?: string | null;
  country_code?: string | null;
  /** The language this row's signer reads in (`en`, `hi`, ...): the template signer's otherwise. */
  language?: string | null;
}

/** One recipient: the template's signers in order, values by `field_id`, an optional stamp and the integrator's key. */
export interface BulkRowRequest {
  key?: string | null;
  signers?: BulkSignerContact[] | null;
  element_values?: Record<string, unknown> | null;
  stamp?: StampRequestInput | null;
}

/**
 * The session options every row of a bulk gets: initialize-from-template's, without its signers; and `notification`,
 * the messages every signer of every row gets (as a signer's `notification` in initialize-esign; none by default).
 */
export type BulkOptions = Omit<InitializeFromTemplateRequest, 'template_id' | 'signers'> & {
  notification?: NotificationInput | null;
};

/**
 * The initialize-from-template request a row stands for: its contacts as the template's signers, each value given to
 * the signer whose field it is (a `field_id` the template lacks goes to the first signer, whose check names it), and
 * the row's stamp, else the bulk's.
 */
export function sessionRequestOf(
  template: Pick<Template, 'id' | 'signers'>,
  options: BulkOptions,
  row: BulkRowRequest,
): InitializeFromTemplateRequest {
  const owner = new Map<string, number>();
  template.signers.forEach((blueprint, index) => {
    for (const element of blueprint.elements) owner.set(element.field_id, index);
  });
  const values = template.signers.map(() => ({}) as Record<string, unknown>);
  for (const [fieldId, value] of Object.entries(row.element_values ?? {})) values[owner.get(fieldId) ?? 0]![fieldId] = value;
  const { notification, ...session } = options;
  const signers = (row.signers ?? []).map((contact, index) => ({
    full_name: contact?.full_name ?? null,
    email: contact?.email ?? null,
    mobile: contact?.mobile ?? null,
    country_code: contact?.country_code ?? null,
    // Absent, the template signer's language stays (a runtime null would not override it either).
    ...(contact?.language != null && { language: contact.language }),
    element_values: values[index] ?? null,
    notification: notification ?? null,
  }));
  return { ...session, template_id: template.id, signers, stamp: row.stamp ?? options.stamp ?? null };
}
