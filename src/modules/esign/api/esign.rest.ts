import { AppError } from '../../../platform/errors';
import type { RestFormat, RestRoute } from '../../../platform/rest/route';
import { fieldValuesCsv, readFieldValues } from '../completion/field-values';
import { fieldValuesFileName } from '../file-names';

/** `?format=csv` of field-values: the same rows as the JSON answer's `fields`, as a CSV file (completion/field-values.ts). */
const fieldValuesAsCsv: RestFormat = {
  mediaType: 'text/csv',
  async send(services, actor, req, res) {
    const clientId = req.query.client_id;
    if (typeof clientId !== 'string' || clientId === '') throw AppError.missingFields(['client_id']);
    const { client_id, fields } = await readFieldValues(services, services.orm.em.fork(), actor, clientId);
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${fieldValuesFileName(client_id)}"`);
    res.send(fieldValuesCsv(fields));
  },
};

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
    path: '/esign/documents',
    operation: 'Query.esignDocuments',
    summary: 'The documents of a session: files, stamp pages, who signs each and how far (added).',
  },
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
    method: 'GET',
    path: '/esign/download-documents',
    operation: 'Query.esignDocumentDownloads',
    summary:
      'Short-lived URLs of every signed document of a completed session (`documents`: `document_id`, `position`, `name`, `filename`, `url`, `expires_in`) and of a ZIP of them all (`zip_url`) (added by this service).',
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
      'Every signature of the session’s current PDF checked in-process: signer, time, digest, covered revision, and what changed after it; `documents`: the same for each document of the envelope (added by this service).',
  },
  {
    method: 'GET',
    path: '/esign/field-values',
    operation: 'Query.esignFieldValues',
    summary:
      'The values of every field of a session, signer by signer: `value` as kept, `shown` as drawn, `filled_at`, `filled_by` (`signer`, `service`, `owner`); `format=csv` answers the same rows as a CSV file (added by this service).',
    formats: { csv: fieldValuesAsCsv },
  },
  {
    method: 'GET',
    path: '/esign/audit',
    operation: 'Query.esignAudit',
    summary:
      'The audit trail of a session: created, invited, viewed, codes sent and verified, location, face attempts, signed, failed, completed, each with time, IP and user agent (added by this service).',
  },
];
