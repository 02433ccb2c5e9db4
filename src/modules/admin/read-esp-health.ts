import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { requireAdmin } from '../../platform/auth/require-admin';
import type { AppServices } from '../../platform/services';
import { espHealthReport } from '../signing';
import type { EspHealthType } from './admin.types';

/** Every configured ESP with its health as every process records it (admin tokens only). */
export async function readEspHealth(services: AppServices, em: EntityManager, actor: Actor): Promise<EspHealthType[]> {
  requireAdmin(actor);
  return espHealthReport(services, em);
}
