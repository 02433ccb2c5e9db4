import type { RestRoute } from '../../platform/rest/route';

export const auditRestRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/esign/audit',
    operation: 'Query.esignAudit',
    summary:
      'The audit trail of a session: created, invited, viewed, codes sent and verified, location, face attempts, signed, failed, completed, each with time, IP and user agent (added by this service).',
  },
];
