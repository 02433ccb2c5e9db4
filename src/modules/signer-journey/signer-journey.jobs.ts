import type { JobDefinition } from '../../platform/jobs/jobs';
import { expireDueEspTransactions } from './aadhaar/esp-outcomes';
import { expireDueDscTransactions } from './dsc/dsc-outcomes';

export const ESP_EXPIRE_SWEEP_JOB = 'esp.expire-sweep';
const SWEEP_BATCH = 500;

export const signerJourneyJobs: JobDefinition<any>[] = [
  {
    // ESP transactions nobody answered, and DSC signatures no token signed: expired within a minute of their time,
    // their prepared bytes deleted.
    name: ESP_EXPIRE_SWEEP_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    async handle(services) {
      let expired: number;
      do {
        expired = await expireDueEspTransactions(services, services.orm.em.fork(), SWEEP_BATCH);
      } while (expired === SWEEP_BATCH);
      do {
        expired = await expireDueDscTransactions(services, services.orm.em.fork(), SWEEP_BATCH);
      } while (expired === SWEEP_BATCH);
    },
  },
];
