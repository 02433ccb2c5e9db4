import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import addressparser from 'nodemailer/lib/addressparser';
import { z } from 'zod';
import { parseRupees } from './platform/money';

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

const envSchema = z.object({
  APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
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
  /** PAdES B-LT/B-LTA on completion: validation data (/DSS) and a document time-stamp. */
  PADES_LTV: bool.default(true),
  /** Each OCSP or CRL request of the LTV step, and all of them for one document together. */
  LTV_REVOCATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  LTV_REVOCATION_BUDGET_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  STAMP_VENDOR: z.enum(['simulated']).default('simulated'),
  ALLOW_SIMULATED_VENDOR: bool.default(false),
  ALLOW_SANDBOX_ESP: bool.default(false),
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

export interface AppConfig {
  env: 'sandbox' | 'production';
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: Env['LOG_LEVEL'];
  storage:
    | { driver: 'local'; dir: string }
    | {
        driver: 's3';
        bucket: string;
        region: string;
        endpoint?: string;
        accessKeyId?: string;
        secretAccessKey?: string;
        forcePathStyle: boolean;
      };
  urlSigningSecret: string;
  secretsEncryptionKey: string;
  downloadUrlTtlSeconds: number;
  runWorkers: boolean;
  queuePollIntervalSeconds: number;
  trustProxy: string | undefined;
  /** `location_source: ip`: a provider URL template with `{ip}`; none by default (the address is still recorded). */
  ipGeolocationUrl?: string;
  shutdownTimeoutMs: number;
  dbPoolMax: number;
  /** The PKCS#12 suresign signatures are made with; unset in sandbox: a generated chain. */
  platformSigningPfx?: { path: string; password: string };
  /**
   * The RFC 3161 time-stamping authority every signature is stamped by (PAdES B-T). In sandbox without TSA_URL, the
   * service's own sandbox TSA; undefined only in production with ALLOW_SIGNING_WITHOUT_TIMESTAMP=true.
   */
  /** TRUST_ANCHORS: a PEM bundle's path, or PEM text (read when signatures are verified). */
  trustAnchors?: string;
  /** PADES_LTV: a completed document gets its /DSS and a document time-stamp (PAdES B-LT, B-LTA). */
  padesLtv: boolean;
  /**
   * LTV_REVOCATION_TIMEOUT_MS, LTV_REVOCATION_BUDGET_MS: the URLs come from certificates anyone can put in a document,
   * so the time the last signature's step waits on them is bounded in all (docs/signing.md).
   */
  ltvRevocation: { timeoutMs: number; budgetMs: number };
  tsa?: {
    url: string;
    authHeader?: { name: string; value: string };
    policyOid?: string;
    timeoutMs: number;
    retries: number;
  };
  stamps: {
    feePerStampPaise: bigint;
    vendor: 'simulated';
    vendorLatencyMs: number;
    vendorRejectionRate: number;
    /** Simulated vendor: share of stamps decided later (`pending`), and share whose first ask hangs. */
    vendorPendingRate: number;
    vendorHangRate: number;
    /** How long a job waits for a vendor's answer. */
    vendorTimeoutMs: number;
    procureBatch: number;
    claimSeconds: number;
  };
  notifications: NotificationConfig;
  webhooks: {
    /** WEBHOOK_ALLOW_PRIVATE: targets on loopback (127/8, ::1) allowed, for a receiver on the developer's machine. */
    allowLoopbackTargets: boolean;
    timeoutMs: number;
    /** Delays between attempts, in seconds; the last repeats. */
    retrySchedule: number[];
    retryWindowSeconds: number;
  };
  /** Requests per minute per caller (0: no limit); see docs/api.md, Limits. */
  rateLimits: { perToken: number; perSigner: number; perAddress: number };
  /** What one GraphQL operation may ask for, on HTTP and graphql-ws alike. */
  graphql: { maxCost: number; maxAliases: number; maxTokens: number };
  /** The worker threads that parse and verify uploaded bytes. */
  workers: { threads: number; maxQueue: number; taskTimeoutMs: number; queueTimeoutMs: number; maxMemoryMb: number };
  /** The eSign Service Providers Aadhaar signers sign through, by the session's `backend` (docs/signing.md). */
  esps: Record<string, EspConfig>;
}

/** One ESP backend: `ESP_<NAME>_*` (the built-in sandbox needs none of them). */
export interface EspConfig {
  name: string;
  /** The ESP's gateway: 2.1, the signer's browser POSTs the signed request here; 3.2, this service POSTs it here. */
  url: string;
  /** The CCA eSign API version spoken: `2.1` (the browser carries the response back) or `3.2` (the ESP posts it). */
  version: '2.1' | '3.2';
  /** 3.2: the ESP's authentication page, where the signer's browser is sent with `txnref` once the ESP acknowledged. */
  authUrl?: string;
  /** 3.2: how long the server-to-server request waits for the ESP's acknowledgement. */
  ackTimeoutSeconds: number;
  aspId: string;
  /** The ESP's response-signing certificate (PEM); the built-in sandbox's is its own key in the database. */
  certificatePem?: string;
  /** The key requests are signed with (the ASP's); the built-in sandbox's ASP key is made in the database. */
  aspPfx?: { path: string; password: string };
  /** How long a transaction waits for the ESP's answer; after it the signer may start again and a late answer is refused. */
  timeoutSeconds: number;
  /** The built-in sandbox ESP, mounted by this service at /sandbox/esp. */
  builtIn: boolean;
}

/** Where messages go (docs/api.md, Notifications): each channel without a provider ends in the outbox table. */
export interface NotificationConfig {
  /** The From header; its display name is the platform's own branding. */
  mailFrom: { name: string; address: string };
  /** smtp:// (STARTTLS when offered) or smtps:// (TLS from the start), with credentials and nodemailer options. */
  smtpUrl?: string;
  sms?: { url: string; token?: string };
  whatsapp?: { url: string; token?: string };
  timeoutMs: number;
  /** Retries after the first attempt; the row is `failed` after retryLimit + 1 attempts. */
  retryLimit: number;
  /** The first retry's delay; later ones back off exponentially (pg-boss retryBackoff). */
  retryDelaySeconds: number;
  /** Lifetime of the signed-PDF link in completion messages. */
  linkTtlSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment once; every problem names the variable at fault. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
  }
  const env = parsed.data;
  const problems: string[] = [];

  const mailFrom = parseMailFrom(env.MAIL_FROM);
  if (!mailFrom) problems.push('MAIL_FROM: must be one address, e.g. "Esign" <no-reply@example.com>');
  if (env.STORAGE_DRIVER === 's3' && !env.S3_BUCKET) {
    problems.push('S3_BUCKET: required when STORAGE_DRIVER=s3');
  }
  if (env.APP_ENV === 'production') {
    for (const [name, value] of Object.entries(DEFAULT_SECRETS)) {
      if (env[name as keyof typeof DEFAULT_SECRETS] === value) {
        problems.push(`${name}: the built-in sandbox default is refused when APP_ENV=production`);
      }
    }
    if (!env.DATABASE_URL) {
      problems.push('DATABASE_URL: required when APP_ENV=production (the embedded database is for sandbox use)');
    }
    if (!env.PLATFORM_SIGNING_PFX) {
      problems.push('PLATFORM_SIGNING_PFX: required when APP_ENV=production (the document-signing certificate for suresign)');
    }
    if (!env.ALLOW_SANDBOX_ESP && !Object.keys(source).some((name) => ESP_URL.test(name) && name !== 'ESP_SANDBOX_URL')) {
      problems.push(
        'ALLOW_SANDBOX_ESP: production needs an eSign Service Provider (ESP_<NAME>_URL and the rest, docs/signing.md), or ALLOW_SANDBOX_ESP=true for the built-in sandbox ESP',
      );
    }
    if (env.STAMP_VENDOR === 'simulated' && !env.ALLOW_SIMULATED_VENDOR) {
      problems.push('STAMP_VENDOR: the simulated vendor is refused when APP_ENV=production unless ALLOW_SIMULATED_VENDOR=true');
    }
    if (!env.PUBLIC_URL) {
      problems.push('PUBLIC_URL: required when APP_ENV=production (invite and download links are built from it)');
    }
    if (!env.TSA_URL && !env.ALLOW_SIGNING_WITHOUT_TIMESTAMP) {
      problems.push(
        'TSA_URL: required when APP_ENV=production (every signature carries a trusted timestamp) unless ALLOW_SIGNING_WITHOUT_TIMESTAMP=true',
      );
    }
  }
  const publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
  const esps = espBackends(source, env, publicUrl, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = path.resolve(env.DATA_DIR);
  // The sandbox TSA answers on the service's own address (src/modules/signing/tsa/sandbox-tsa.ts).
  const tsaUrl = env.TSA_URL ?? (env.APP_ENV === 'sandbox' ? `${publicUrl}/sandbox/tsa` : undefined);
  const tsaHeader = env.TSA_AUTH_HEADER?.match(/^([^:]+):\s*(.*)$/);
  return {
    env: env.APP_ENV,
    port: env.PORT,
    host: env.HOST,
    publicUrl,
    databaseUrl: env.DATABASE_URL,
    dataDir,
    logLevel: env.LOG_LEVEL,
    storage:
      env.STORAGE_DRIVER === 's3'
        ? {
            driver: 's3',
            bucket: env.S3_BUCKET!,
            region: env.S3_REGION,
            endpoint: env.S3_ENDPOINT,
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
            forcePathStyle: env.S3_FORCE_PATH_STYLE,
          }
        : { driver: 'local', dir: path.resolve(env.STORAGE_DIR ?? path.join(dataDir, 'blobs')) },
    urlSigningSecret: env.URL_SIGNING_SECRET,
    secretsEncryptionKey: env.SECRETS_ENCRYPTION_KEY,
    downloadUrlTtlSeconds: env.DOWNLOAD_URL_TTL_SECONDS,
    runWorkers: env.RUN_WORKERS,
    queuePollIntervalSeconds: env.QUEUE_POLL_INTERVAL_SECONDS,
    trustProxy: env.TRUST_PROXY,
    ipGeolocationUrl: env.IP_GEOLOCATION_URL,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    dbPoolMax: env.DB_POOL_MAX,
    platformSigningPfx: env.PLATFORM_SIGNING_PFX
      ? { path: path.resolve(env.PLATFORM_SIGNING_PFX), password: env.PLATFORM_SIGNING_PFX_PASSWORD ?? '' }
      : undefined,
    trustAnchors: env.TRUST_ANCHORS,
    padesLtv: env.PADES_LTV,
    ltvRevocation: { timeoutMs: env.LTV_REVOCATION_TIMEOUT_MS, budgetMs: env.LTV_REVOCATION_BUDGET_MS },
    tsa: tsaUrl
      ? {
          url: tsaUrl,
          authHeader: tsaHeader ? { name: tsaHeader[1]!.trim(), value: tsaHeader[2]!.trim() } : undefined,
          policyOid: env.TSA_POLICY_OID,
          timeoutMs: env.TSA_TIMEOUT_MS,
          retries: env.TSA_RETRIES,
        }
      : undefined,
    stamps: {
      feePerStampPaise: parseRupees(env.ESTAMP_FEE_PER_STAMP)!,
      vendor: env.STAMP_VENDOR,
      vendorLatencyMs: env.STAMP_VENDOR_LATENCY_MS,
      vendorRejectionRate: env.STAMP_VENDOR_REJECTION_RATE,
      vendorPendingRate: env.STAMP_VENDOR_PENDING_RATE,
      vendorHangRate: env.STAMP_VENDOR_HANG_RATE,
      vendorTimeoutMs: env.STAMP_VENDOR_TIMEOUT_MS,
      procureBatch: env.STAMP_PROCURE_BATCH,
      claimSeconds: env.STAMP_CLAIM_SECONDS,
    },
    webhooks: {
      allowLoopbackTargets: env.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      retrySchedule: env.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number),
      retryWindowSeconds: env.WEBHOOK_RETRY_WINDOW_SECONDS,
    },
    notifications: {
      mailFrom: mailFrom!,
      smtpUrl: env.SMTP_URL,
      sms: env.SMS_HTTP_URL ? { url: env.SMS_HTTP_URL, token: env.SMS_HTTP_TOKEN } : undefined,
      whatsapp: env.WHATSAPP_HTTP_URL ? { url: env.WHATSAPP_HTTP_URL, token: env.WHATSAPP_HTTP_TOKEN } : undefined,
      timeoutMs: env.NOTIFY_TIMEOUT_MS,
      retryLimit: env.NOTIFY_RETRY_LIMIT,
      retryDelaySeconds: env.NOTIFY_RETRY_DELAY_SECONDS,
      linkTtlSeconds: env.NOTIFY_LINK_TTL_SECONDS,
    },
    rateLimits: {
      perToken: env.RATE_LIMIT_PER_TOKEN,
      perSigner: env.RATE_LIMIT_PER_SIGNER,
      perAddress: env.RATE_LIMIT_PER_ADDRESS,
    },
    graphql: { maxCost: env.GRAPHQL_MAX_COST, maxAliases: env.GRAPHQL_MAX_ALIASES, maxTokens: env.GRAPHQL_MAX_TOKENS },
    workers: {
      threads: env.WORKER_THREADS,
      maxQueue: env.WORKER_QUEUE_MAX,
      taskTimeoutMs: env.WORKER_TASK_TIMEOUT_MS,
      queueTimeoutMs: env.WORKER_QUEUE_TIMEOUT_MS,
      maxMemoryMb: env.WORKER_MAX_MEMORY_MB,
    },
    esps,
  };
}

const ESP_URL = /^ESP_([A-Z0-9]+)_URL$/;

/**
 * The ESP backends: each `ESP_<NAME>_URL` with its `_CERT` (PEM text or a file), `_ASP_ID`, `_ASP_PFX`,
 * `_ASP_PFX_PASSWORD`, `_VERSION` (2.1 or 3.2) and `_TIMEOUT_SECONDS`, and for 3.2 `_AUTH_URL` (the ESP's
 * authentication page) and `_ACK_TIMEOUT_SECONDS`; the backend is `<name>` in lower case. In
 * sandbox (and in production with ALLOW_SANDBOX_ESP) `sandbox` is the built-in gateway unless ESP_SANDBOX_URL names
 * another, which then needs its certificate and an ASP key like any ESP.
 */
function espBackends(source: NodeJS.ProcessEnv, env: Env, publicUrl: string, problems: string[]): Record<string, EspConfig> {
  const esps: Record<string, EspConfig> = {};
  const names = Object.keys(source)
    .map((key) => ESP_URL.exec(key)?.[1])
    .filter((name): name is string => !!name);
  const sandboxAllowed = env.APP_ENV === 'sandbox' || env.ALLOW_SANDBOX_ESP;
  if (sandboxAllowed && !names.includes('SANDBOX')) names.push('SANDBOX');
  for (const name of names) {
    const value = (suffix: string) => source[`ESP_${name}_${suffix}`]?.trim() || undefined;
    const builtIn = name === 'SANDBOX' && !value('URL');
    const version = value('VERSION') ?? '2.1';
    if (version !== '2.1' && version !== '3.2') problems.push(`ESP_${name}_VERSION: 2.1 or 3.2`);
    const timeout = Number(value('TIMEOUT_SECONDS') ?? 900);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 86_400) problems.push(`ESP_${name}_TIMEOUT_SECONDS: 1 to 86400`);
    const url = builtIn ? `${publicUrl}/sandbox/esp` : value('URL')!;
    if (!/^https?:\/\/\S+$/.test(url)) problems.push(`ESP_${name}_URL: an http(s) URL`);
    const authUrl = builtIn ? `${publicUrl}/sandbox/esp/authpage` : value('AUTH_URL');
    if (version === '3.2' && !authUrl) problems.push(`ESP_${name}_AUTH_URL: required with ESP_${name}_VERSION=3.2`);
    if (authUrl && !/^https?:\/\/\S+$/.test(authUrl)) problems.push(`ESP_${name}_AUTH_URL: an http(s) URL`);
    const ackTimeout = Number(value('ACK_TIMEOUT_SECONDS') ?? 20);
    if (!Number.isInteger(ackTimeout) || ackTimeout < 1 || ackTimeout > 120)
      problems.push(`ESP_${name}_ACK_TIMEOUT_SECONDS: 1 to 120`);
    if (!builtIn) {
      for (const required of ['CERT', 'ASP_ID', 'ASP_PFX']) {
        if (!value(required)) problems.push(`ESP_${name}_${required}: required with ESP_${name}_URL`);
      }
    }
    const pfx = value('ASP_PFX');
    esps[name.toLowerCase()] = {
      name: name.toLowerCase(),
      url,
      version: version === '3.2' ? '3.2' : '2.1',
      ...(version === '3.2' && authUrl ? { authUrl } : {}),
      ackTimeoutSeconds: ackTimeout,
      aspId: value('ASP_ID') ?? 'ESIGN-SANDBOX-ASP',
      certificatePem: builtIn ? undefined : pemOrFile(`ESP_${name}_CERT`, value('CERT'), problems),
      aspPfx: builtIn || !pfx ? undefined : { path: path.resolve(pfx), password: source[`ESP_${name}_ASP_PFX_PASSWORD`] ?? '' },
      timeoutSeconds: timeout,
      builtIn,
    };
  }
  return esps;
}

/** PEM text as given, or the contents of the file it names. */
function pemOrFile(variable: string, value: string | undefined, problems: string[]): string | undefined {
  if (!value) return undefined;
  if (value.includes('-----BEGIN CERTIFICATE-----')) return value;
  try {
    const text = readFileSync(path.resolve(value), 'utf8');
    if (text.includes('-----BEGIN CERTIFICATE-----')) return text;
    problems.push(`${variable}: ${value} holds no PEM certificate`);
  } catch {
    problems.push(`${variable}: PEM text, or a readable file holding it (${value} cannot be read)`);
  }
  return undefined;
}

/** `"Name" <address>` or a bare address; without a name the platform calls itself `Esign`. */
function parseMailFrom(value: string): { name: string; address: string } | undefined {
  const parsed = addressparser(value, { flatten: true });
  const only = parsed.length === 1 ? parsed[0] : undefined;
  if (!only?.address || !/^[^@\s]+@[^@\s]+$/.test(only.address)) return undefined;
  return { name: only.name || 'Esign', address: only.address };
}

/** The configuration as it may be logged: secrets and credentials masked. */
export function describeConfig(config: AppConfig): Record<string, unknown> {
  const mask = (v: string | undefined) => (v ? '***' : undefined);
  const maskUserinfo = (url: string | undefined) => url?.replace(/\/\/([^@/]*)@/, '//***@');
  const gateway = (g: { url: string; token?: string } | undefined) => g && { url: maskUserinfo(g.url), token: mask(g.token) };
  return {
    ...config,
    databaseUrl: config.databaseUrl ? maskUserinfo(config.databaseUrl) : 'embedded',
    stamps: { ...config.stamps, feePerStampPaise: config.stamps.feePerStampPaise.toString() },
    platformSigningPfx: config.platformSigningPfx ? { path: config.platformSigningPfx.path, password: '***' } : undefined,
    esps: Object.fromEntries(
      Object.entries(config.esps).map(([name, esp]) => [
        name,
        {
          ...esp,
          certificatePem: esp.certificatePem && '(PEM)',
          aspPfx: esp.aspPfx && { path: esp.aspPfx.path, password: '***' },
        },
      ]),
    ),
    tsa: config.tsa && {
      ...config.tsa,
      url: maskUserinfo(config.tsa.url),
      authHeader: config.tsa.authHeader && { name: config.tsa.authHeader.name, value: '***' },
    },
    notifications: {
      ...config.notifications,
      smtpUrl: maskUserinfo(config.notifications.smtpUrl),
      sms: gateway(config.notifications.sms),
      whatsapp: gateway(config.notifications.whatsapp),
    },
    urlSigningSecret: mask(config.urlSigningSecret),
    secretsEncryptionKey: mask(config.secretsEncryptionKey),
    storage:
      config.storage.driver === 's3'
        ? {
            ...config.storage,
            accessKeyId: mask(config.storage.accessKeyId),
            secretAccessKey: mask(config.storage.secretAccessKey),
          }
        : config.storage,
  };
}
