/**
 * notifications: the outbox. Every message is a row written in the transaction that decided to send it and
 * delivered afterwards by a job (SMTP, an HTTP provider, or nowhere but the table). It renders and sends;
 * who gets what, and when, is decided by the modules above it.
 */
import type { ModuleManifest } from '../../platform/module';
import { Notification } from './notification.entity';
import { notificationJobs } from './notifications.jobs';

export { composeMime } from './compose-mime';
export { Notification, type NotificationChannel, type NotificationKind } from './notification.entity';
export { NotificationMessagePageType, NotificationMessageType, toNotificationView } from './notification.types';
export { queueNotifications, type NotificationDraft } from './queue-notifications';
export { listOwnNotifications } from './read-notifications';
export {
  brandingOf,
  renderCompletion,
  renderDeclineNotice,
  renderRequestEnded,
  renderInvite,
  renderOneTimeCode,
  renderReminder,
  type BrandingOverrides,
  type RenderedMessage,
} from './render-messages';

export const notificationsModule: ModuleManifest = {
  name: 'notifications',
  entities: [Notification],
  jobs: notificationJobs,
};
