/**
 * bulk: one template sent to many recipients, one session per row, made by a job that resumes where it stopped.
 * Built on templates (initialize-from-template makes each session) and esign (cancelling a bulk's sessions).
 */
import type { ModuleManifest } from '../../platform/module';
import { bulkJobs } from './bulk.jobs';
import { Bulk, BulkRow } from './bulk.entity';
import { BulkResolver } from './bulk.resolver';
import { bulkRestRoutes } from './bulk.rest';

export const bulkModule: ModuleManifest = {
  name: 'bulk',
  entities: [Bulk, BulkRow],
  resolvers: [BulkResolver],
  restRoutes: bulkRestRoutes,
  jobs: bulkJobs,
};
