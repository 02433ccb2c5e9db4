import type { RestRoute } from '../../platform/rest/route';

export const verifyRestRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/esign/verify',
    operation: 'Query.esignVerification',
    summary:
      'Every signature of the session’s current PDF checked in-process: signer, time, digest, covered revision, and what changed after it (added by this service).',
  },
];
