import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';

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
