import { esignJobs } from './modules/esign/esign.jobs';
import { notificationJobs } from './modules/notifications/notifications.jobs';
import { stampJobs } from './modules/stamps/procure-stamps.job';
import type { JobDefinition } from './platform/jobs/jobs';

/** Every queue of the service: created by each process at start, worked by the API process or workers. */
export const jobDefinitions: JobDefinition<any>[] = [...esignJobs, ...stampJobs, ...notificationJobs];
