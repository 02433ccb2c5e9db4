/**
 * The environment variables the service reads, each with its check and its default. Checks across variables, and
 * the AppConfig made from them, are load-config.ts's.
 */
import os from 'node:os';
import { z } from 'zod';

/** Secrets that ship in the repository: fine for a sandbox on a laptop, refused in production. */
export const DEFAULT_SECRETS = {
  URL_SIGNING_SECRET: 'sandbox-url-signing-secret-change-me',
  SECRETS_ENCRYPTION_KEY: 'sandbox-secrets-encryption-key-change-me',
} as const;

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export const envSchema = z.object({
  APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /**
   * The event bus's one LISTEN connection (src/platform/events): straight to PostgreSQL when DATABASE_URL goes
   * through a transaction-mode pooler such as PgBouncer, where LISTEN never hears a notification. Default DATABASE_URL.
   */
  DATABASE_LISTEN_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATA_DIR: z.string().min(1).default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  STORAGE_DIR: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: optionalString.pipe(z.url().optional()),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: bool.default(true),
  URL_SIGNING_SECRET: z.string().min(16).default(DEFAULT_SECRETS.URL_SIGNING_SECRET),
  SECRETS_ENCRYPTION_KEY: z.string().min(16).default(DEFAULT_SECRETS.SECRETS_ENCRYPTION_KEY),
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(86_400).default(300),
  RUN_WORKERS: bool.default(true),
  QUEUE_POLL_INTERVAL_SECONDS: z.coerce.number().min(0.5).max(60).default(1),
  BULK_STALE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  BULK_INVITES_PER_SECOND: z.coerce.number().min(0.1).max(1000).default(10),
  TRUST_PROXY: optionalString,
  IP_GEOLOCATION_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  ESTAMP_FEE_PER_STAMP: z
    .string()
    .regex(/^\d{1,7}(\.\d{1,2})?$/, 'rupees with at most 2 decimals')
    .default('10.00'),
  PLATFORM_SIGNING_PFX: optionalString,
  PLATFORM_SIGNING_PFX_PASSWORD: z.string().optional(),
  TSA_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** One header line for the TSA, `Name: value` (e.g. `Authorization: Basic ...`). */
  TSA_AUTH_HEADER: optionalString.pipe(
    z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:\s*\S.*$/, 'one header, "Name: value"')
      .optional(),
  ),
  TSA_POLICY_OID: optionalString.pipe(
    z
      .string()
      .regex(/^[0-2](\.(0|[1-9]\d*))+$/, 'a dotted OID')
      .optional(),
  ),
  TSA_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  TSA_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  ALLOW_SIGNING_WITHOUT_TIMESTAMP: bool.default(false),
  /** The CA certificates signatures are judged against: a PEM bundle file, or the PEM text itself. */
  TRUST_ANCHORS: optionalString,
  /** DSC signing (docs/signing.md): the CAs a signer's certificate must chain to (the CCA's roots), a PEM bundle or PEM text. */
  DSC_TRUST_ANCHORS: optionalString,
  /** Where the signing page looks for the signer's DSC bridge (bridge/README.md), on the signer's own computer. */
  DSC_BRIDGE_URL: optionalString.pipe(z.url({ protocol: /^http$/, hostname: /^(127\.0\.0\.1|localhost)$/ }).optional()),
  DSC_BRIDGE_DOWNLOAD_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  DSC_BRIDGE_HELP_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** How long a DSC signature prepared for the signer's token waits for the token's signature. */
  DSC_SIGN_TIMEOUT_SECONDS: z.coerce.number().int().min(60).max(3600).default(600),
  /** PAdES B-LT/B-LTA on completion: validation data (/DSS) and a document time-stamp. */
  PADES_LTV: bool.default(true),
  /** Each OCSP or CRL request of the LTV step, and all of them for one document together. */
  LTV_REVOCATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  LTV_REVOCATION_BUDGET_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  STAMP_VENDOR: z.enum(['simulated']).default('simulated'),
  ALLOW_SIMULATED_VENDOR: bool.default(false),
  ALLOW_SANDBOX_ESP: bool.default(false),
  /** ESP failover (docs/signing.md): an ESP that failed this many times in a row is skipped for ESP_SKIP_SECONDS. */
  ESP_FAILURES_BEFORE_SKIP: z.coerce.number().int().min(1).max(100).default(3),
  ESP_SKIP_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  STAMP_VENDOR_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(20),
  STAMP_VENDOR_REJECTION_RATE: z.coerce.number().min(0).max(1).default(0.02),
  STAMP_VENDOR_PENDING_RATE: z.coerce.number().min(0).max(1).default(0),
  STAMP_VENDOR_HANG_RATE: z.coerce.number().min(0).max(1).default(0),
  STAMP_VENDOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  STAMP_PROCURE_BATCH: z.coerce.number().int().min(1).max(1000).default(250),
  STAMP_CLAIM_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  MAIL_FROM: z.string().min(3).default('"Esign sandbox" <no-reply@localhost>'),
  SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  SMS_HTTP_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  SMS_HTTP_TOKEN: optionalString,
  WHATSAPP_HTTP_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  WHATSAPP_HTTP_TOKEN: optionalString,
  /** Webhook targets on loopback allowed (a receiver on the developer's machine); private, link-local and metadata addresses never. */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Seconds between attempts, in order; the last repeats until the retry window closes. */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'seconds, comma-separated')
    .default('60,300,1800,7200,18000,36000,50400,72000'),
  /** How long a delivery is retried after its first attempt, and how long an endpoint may fail before it is disabled. */
  WEBHOOK_RETRY_WINDOW_SECONDS: z.coerce.number().min(1).max(2_592_000).default(259_200),
  NOTIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  NOTIFY_RETRY_LIMIT: z.coerce.number().int().min(0).max(20).default(5),
  NOTIFY_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  NOTIFY_LINK_TTL_SECONDS: z.coerce.number().int().min(60).max(2_592_000).default(604_800),
  RATE_LIMIT_PER_TOKEN: z.coerce.number().int().min(0).default(1200),
  RATE_LIMIT_PER_SIGNER: z.coerce.number().int().min(0).default(300),
  RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(0).default(120),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(100).default(1_000_000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).max(1000).default(30),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).max(1_000_000).default(5000),
  // One core stays with the event loop; work on uploaded bytes gets the rest.
  WORKER_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(Math.max(1, os.availableParallelism() - 1)),
  WORKER_QUEUE_MAX: z.coerce.number().int().min(1).max(10_000).default(64),
  WORKER_TASK_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(20_000),
  WORKER_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(20_000),
  WORKER_MAX_MEMORY_MB: z.coerce.number().int().min(64).max(16_384).default(1024),
});

export type Env = z.infer<typeof envSchema>;
