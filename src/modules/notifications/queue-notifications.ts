import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type PgBoss from 'pg-boss';
import { enqueue } from '../../platform/jobs/enqueue';
import type { AppServices } from '../../platform/services';
import type { RowRef } from '../../platform/db/row-ref';
import type { User } from '../users';
import { Notification, type NotificationChannel, type NotificationKind } from './notification.entity';

export const DELIVER_JOB = 'notifications.deliver';
export const SWEEP_JOB = 'notifications.sweep';

export interface DeliverJobData {
  notification_id: string;
  /** One-time codes: a code that expired before it could be delivered is not sent any more. */
  not_after?: string;
}

export interface NotificationDraft {
  user: User;
  session?: RowRef;
  signer?: RowRef;
  kind: NotificationKind;
  channel: NotificationChannel;
  recipient: string;
  subject?: string;
  textBody: string;
  htmlBody?: string;
  mime?: string;
  notAfter?: Date;
  /** Not sent before this time (a bulk's invites, paced): the delivery job starts after it. */
  notBefore?: Date;
}

/**
 * Writes the rows and their delivery jobs in `em`'s transaction (its own when `em` is in none): a decision
 * that rolls back sends nothing, one that commits has its jobs, and no worker sees a job before its row.
 * Nothing has to be called after the commit. Returns the notification ids.
 */
export async function queueNotifications(
  services: AppServices,
  em: EntityManager,
  drafts: readonly NotificationDraft[],
): Promise<string[]> {
  if (drafts.length === 0) return [];
  const write = async (tx: EntityManager) => {
    const rows = drafts.map(({ notAfter: _notAfter, notBefore: _notBefore, session, signer, ...draft }) =>
      tx.create(Notification, {
        ...draft,
        session: session && tx.getReference<RowRef>('EsignSession', session.id),
        signer: signer && tx.getReference<RowRef>('Signer', signer.id),
      }),
    );
    await tx.flush();
    await enqueue(
      services.boss,
      tx,
      deliveryJobs(
        services,
        rows.map((row, i) => ({ id: row.id, notAfter: drafts[i].notAfter, notBefore: drafts[i].notBefore })),
      ),
    );
    return rows.map((row) => row.id);
  };
  return em.isInTransaction() ? write(em) : em.transactional(write);
}

/**
 * Sends the delivery jobs of rows already committed (the sweep uses it). Safe to call any number of times:
 * a row's job id is derived from the row's id, so a job that already exists is left as it is.
 */
export async function dispatchNotifications(services: AppServices, ids: readonly string[]): Promise<void> {
  await enqueue(
    services.boss,
    null,
    deliveryJobs(
      services,
      ids.map((id) => ({ id })),
    ),
  );
}

function deliveryJobs(
  services: AppServices,
  rows: { id: string; notAfter?: Date; notBefore?: Date }[],
): PgBoss.JobInsert<DeliverJobData>[] {
  const { retryLimit, retryDelaySeconds } = services.config.notifications;
  return rows.map((row) => ({
    id: deliveryJobId(row.id),
    name: DELIVER_JOB,
    ...(row.notBefore && { startAfter: row.notBefore }),
    data: { notification_id: row.id, ...(row.notAfter ? { not_after: row.notAfter.toISOString() } : {}) },
    retryLimit,
    retryDelay: retryDelaySeconds,
    retryBackoff: true,
    // Longer than any one delivery can take (three timeouts of at most 2 minutes); an active job older
    // than this belonged to a worker that died, and pg-boss hands it to another.
    expireInSeconds: 600,
  }));
}

/** A UUID (version 8, RFC 9562) derived from the notification id: one job per row, whoever sends it. */
export function deliveryJobId(notificationId: string): string {
  const hex = createHash('sha256').update(`notification:${notificationId}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
