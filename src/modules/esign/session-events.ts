import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent, recordWebhookEvents, type NewWebhookEvent, type WebhookEventType } from '../webhooks';
import type { EsignSession } from './esign-session.entity';
import type { FieldValue } from './elements/field-values';
import type { DocumentSummary } from './documents';

export const sessionTopic = (clientId: string) => `esign:${clientId}`;

export interface SessionEvent {
  client_id: string;
  user_id: string;
  status: string;
  [key: string]: unknown;
}

/** Announces a change of a session or one of its signers; delivered when `em`'s transaction commits. */
export function publishSessionChange(services: AppServices, em: EntityManager, event: SessionEvent): Promise<void> {
  return services.events.publish(em, sessionTopic(event.client_id), event);
}

/** A signer's step (a check passed, a signature, a failed attempt): the session's status with the signer's. */
export function publishSignerChange(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
  signer: { id: string; status: string },
): Promise<void> {
  return publishSessionChange(services, em, {
    client_id: session.id,
    user_id: session.user.id,
    status: session.status,
    signer_id: signer.id,
    signer_status: signer.status,
  });
}

/**
 * A webhook event about a session (`esign.*`), in `em`'s transaction; its `data` is the session as GET
 * esign/details shows it, and a signer's event names the signer (`signer_id`). `esign.signer.signed` carries the
 * signer's field values as they were at the signature (`fields`, as GET esign/field-values shows them).
 */
export function recordSessionWebhook(
  services: AppServices,
  em: EntityManager,
  session: { id: string; userId: string },
  type: Extract<WebhookEventType, `esign.${string}`>,
  signerId?: string,
  /** What the event adds: the signer's field values, the documents it concerns (documentSummary). */
  extra?: { fields?: FieldValue[]; documents?: DocumentSummary[] },
): Promise<string | null> {
  const attributes = { ...(signerId ? { signer_id: signerId } : {}), ...extra };
  return recordWebhookEvent(services, em, {
    ...sessionWebhookEvent(session, type),
    ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
  });
}

/** The same event about many sessions at once (a bulk's chunk, created together). */
export async function recordSessionsWebhook(
  services: AppServices,
  em: EntityManager,
  sessions: readonly { id: string; userId: string }[],
  type: Extract<WebhookEventType, `esign.${string}`>,
): Promise<void> {
  await recordWebhookEvents(
    services,
    em,
    sessions.map((session) => sessionWebhookEvent(session, type)),
  );
}

function sessionWebhookEvent(session: { id: string; userId: string }, type: WebhookEventType): NewWebhookEvent {
  return {
    userId: session.userId,
    type,
    resourceId: session.id,
    read: { operation: 'Query.esignSession', variables: { client_id: session.id } },
  };
}
