/**
 * stamps: e-stamp reference data (states, articles), orders procured from a vendor by a job, and stamp
 * instances reserved for and used by sessions. Sessions are known here by id only.
 */
import type { ModuleManifest } from '../../platform/module';
import { stampJobs } from './procure-stamps.job';
import { StampInstanceEvent } from './stamp-instance-event.entity';
import { StampInstance, StampOrder } from './stamp-order.entity';
import { StampArticle, StampState } from './stamp-reference.entity';
import { stampLoaders } from './stamp.loaders';
import { StampInstanceResolver, StampOrderCountsResolver, StampOrderResolver } from './stamp.resolver';
import { stampRestRoutes } from './stamps.rest';

export { MAX_EXPLICIT_STAMPS, planStamp, type StampPlan, type StampRequest } from './plan-stamp';
export { getOwnOrder } from './read-stamps';
export { reserveStamps, settleSessionStamps, type SessionEnd } from './reserve-stamps';
export { StampInstanceType, toStampView } from './stamp.types';
export {
  stampVendors,
  type StampRequest as VendorStampRequest,
  type StampVendor,
  type StampVendors,
  type VendorAnswer,
} from './vendors/vendor';

export const stampsModule: ModuleManifest = {
  name: 'stamps',
  entities: [StampState, StampArticle, StampOrder, StampInstance, StampInstanceEvent],
  resolvers: [StampOrderResolver, StampOrderCountsResolver, StampInstanceResolver],
  restRoutes: stampRestRoutes,
  jobs: stampJobs,
  loaders: stampLoaders,
};
