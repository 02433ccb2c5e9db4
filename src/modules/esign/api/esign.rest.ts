import type { RestRoute } from '../../../platform/rest/route';

export const esignRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/esign/initialize-esign',
    operation: 'Mutation.initializeEsign',
    summary: 'Start an Esign session for one or more signers on an uploaded PDF.',
  },
  { method: 'GET', path: '/esign/details', operation: 'Query.esignSession', summary: 'Read a session with its signers.' },
  {
    method: 'GET',
    path: '/esign/download-pdf',
    operation: 'Query.esignDownloadUrl',
    summary: 'A short-lived URL of the signed PDF, once the session is completed.',
  },
  {
    method: 'GET',
    path: '/esign/download-certificate',
    operation: 'Query.esignCompletionCertificateUrl',
    summary:
      'A short-lived URL of the certificate of completion (a PDF signed by the platform), once the session is completed (added by this service).',
  },
  {
    method: 'POST',
    path: '/esign/cancel',
    operation: 'Mutation.cancelEsign',
    summary: 'Cancel a pending session (added by this service).',
  },
  {
    method: 'POST',
    path: '/esign/resend-invite',
    operation: 'Mutation.resendInvite',
    summary:
      'Send the invite of the signer whose turn it is again (`client_id`, `signer_id`); at most 3 times an hour per signer (added by this service).',
  },
  {
    method: 'POST',
    path: '/esign/reassign-signer',
    operation: 'Mutation.reassignSigner',
    summary:
      'Hand a pending signer’s place to another person: `client_id`, `signer_id` and any of `full_name`, `email`, `mobile`, `country_code`; a new signer token replaces the old (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/list',
    operation: 'Query.esignSessions',
    summary:
      'Your sessions, newest first, with `page` from 1, `size` 1 to 100, optional `status` and `folder` (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/verify',
    operation: 'Query.esignVerification',
    summary:
      'Every signature of the session’s current PDF checked in-process: signer, time, digest, covered revision, and what changed after it (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/audit',
    operation: 'Query.esignAudit',
    summary:
      'The audit trail of a session: created, invited, viewed, codes sent and verified, location, face attempts, signed, failed, completed, each with time, IP and user agent (added by this service).',
  },
];
