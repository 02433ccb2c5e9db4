import type { InitializeFromTemplateRequest, Template } from '../templates';
import type { StampRequestInput } from '../esign';

/** The person who opened the link, as they gave themselves. */
export interface VisitorContact {
  full_name?: string | null;
  email?: string | null;
  mobile?: string | null;
  country_code?: string | null;
}

/** What a link's sessions get: initialize-from-template's options, and who the template's other signers are. */
export interface DirectLinkOptions {
  /** The template signer the visitor is (from 0; 0 by default). */
  visitor_position?: number | null;
  /** The visitor's reason for signing, where the template saves none for that signer. */
  visitor_reason?: string | null;
  /** The template's other signers (contacts, and a reason where the template saves none), in order, the visitor's place left out. */
  signers?: (VisitorContact & { reason?: string | null })[] | null;
  sign_type?: string | null;
  expiry_seconds?: number | null;
  redirect_url?: string | null;
  folder?: string | null;
  stamp?: StampRequestInput | null;
}

/**
 * The initialize-from-template request one visit stands for: the visitor in their place among the link's signers. A
 * position outside the template leaves the visitor out, and the signer count check names it.
 */
export function linkRequest(
  template: Pick<Template, 'id' | 'signers'>,
  options: DirectLinkOptions,
  visitor: VisitorContact,
): InitializeFromTemplateRequest {
  const position = options.visitor_position ?? 0;
  const others = [...(options.signers ?? [])];
  const you = { ...visitor, reason: options.visitor_reason ?? null };
  const contacts =
    position >= 0 && position <= others.length ? [...others.slice(0, position), you, ...others.slice(position)] : others;
  return {
    template_id: template.id,
    sign_type: options.sign_type ?? null,
    expiry_seconds: options.expiry_seconds ?? null,
    redirect_url: options.redirect_url ?? null,
    folder: options.folder ?? null,
    stamp: options.stamp ?? null,
    // The visitor signs on the page they are on and gets the completed document; the others are invited in turn.
    signers: contacts.map((contact) => ({
      full_name: contact.full_name ?? null,
      email: contact.email ?? null,
      mobile: contact.mobile ?? null,
      country_code: contact.country_code ?? null,
      reason: contact.reason ?? null,
      notification: { invite: contact !== you, completion: true },
    })),
  };
}
