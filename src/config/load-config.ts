import path from 'node:path';
import addressparser from 'nodemailer/lib/addressparser';
import type { AppConfig, EspConfig, NotificationConfig } from './app-config';
import { DEFAULT_SECRETS, envSchema, type Env } from './env-schema';
import { ESP_URL, espBackends, espGroups } from './esp-backends';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment once; every problem names the variable at fault. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const env = parseEnvironment(source);
  const problems: string[] = [];

  const mailFrom = parseMailFrom(env.MAIL_FROM);
  if (!mailFrom) problems.push('MAIL_FROM: must be one address, e.g. "Esign" <no-reply@example.com>');
  if (env.STORAGE_DRIVER === 's3' && !env.S3_BUCKET) {
    problems.push('S3_BUCKET: required when STORAGE_DRIVER=s3');
  }
  if (env.DATABASE_LISTEN_URL && !env.DATABASE_URL) {
    problems.push('DATABASE_LISTEN_URL: needs DATABASE_URL (with the embedded database the event bus listens there)');
  }
  if (env.APP_ENV === 'production') problems.push(...productionProblems(env, source));
  const publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
  const esps = espBackends(source, env, publicUrl, problems);
  const groups = espGroups(source, esps, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return appConfigOf(env, publicUrl, mailFrom!, esps, groups);
}

/** Each variable on its own: its type, range and default (env-schema.ts). */
function parseEnvironment(source: NodeJS.ProcessEnv): Env {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
  }
  return parsed.data;
}

/** What production refuses: the sandbox's defaults and stand-ins, unless a variable says they are meant. */
function productionProblems(env: Env, source: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
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
  return problems;
}

/** The checked environment as the service reads it; the sections with rules of their own are built below. */
function appConfigOf(
  env: Env,
  publicUrl: string,
  mailFrom: NotificationConfig['mailFrom'],
  esps: Record<string, EspConfig>,
  espGroupsByName: Record<string, string[]>,
): AppConfig {
  const dataDir = path.resolve(env.DATA_DIR);
  return {
    env: env.APP_ENV,
    port: env.PORT,
    host: env.HOST,
    publicUrl,
    databaseUrl: env.DATABASE_URL,
    databaseListenUrl: env.DATABASE_LISTEN_URL,
    dataDir,
    logLevel: env.LOG_LEVEL,
    storage: storageOf(env, dataDir),
    urlSigningSecret: env.URL_SIGNING_SECRET,
    secretsEncryptionKey: env.SECRETS_ENCRYPTION_KEY,
    downloadUrlTtlSeconds: env.DOWNLOAD_URL_TTL_SECONDS,
    runWorkers: env.RUN_WORKERS,
    queuePollIntervalSeconds: env.QUEUE_POLL_INTERVAL_SECONDS,
    bulkStaleSeconds: env.BULK_STALE_SECONDS,
    bulkInvitesPerSecond: env.BULK_INVITES_PER_SECOND,
    trustProxy: env.TRUST_PROXY,
    ipGeolocationUrl: env.IP_GEOLOCATION_URL,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    dbPoolMax: env.DB_POOL_MAX,
    platformSigningPfx: env.PLATFORM_SIGNING_PFX
      ? { path: path.resolve(env.PLATFORM_SIGNING_PFX), password: env.PLATFORM_SIGNING_PFX_PASSWORD ?? '' }
      : undefined,
    trustAnchors: env.TRUST_ANCHORS,
    dsc: {
      trustAnchors: env.DSC_TRUST_ANCHORS,
      bridgeUrl: (env.DSC_BRIDGE_URL ?? 'http://127.0.0.1:17365').replace(/\/+$/, ''),
      downloadUrl: env.DSC_BRIDGE_DOWNLOAD_URL ?? `${publicUrl}/dsc-bridge/esign-dsc-bridge.zip`,
      helpUrl: env.DSC_BRIDGE_HELP_URL ?? `${publicUrl}/dsc-bridge`,
      signTimeoutSeconds: env.DSC_SIGN_TIMEOUT_SECONDS,
    },
    padesLtv: env.PADES_LTV,
    ltvRevocation: { timeoutMs: env.LTV_REVOCATION_TIMEOUT_MS, budgetMs: env.LTV_REVOCATION_BUDGET_MS },
    tsa: tsaOf(env, publicUrl),
    stamps: stampsOf(env),
    webhooks: {
      allowLoopbackTargets: env.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      retrySchedule: env.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number),
      retryWindowSeconds: env.WEBHOOK_RETRY_WINDOW_SECONDS,
    },
    notifications: notificationsOf(env, mailFrom),
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
    espRouting: {
      groups: espGroupsByName,
      failuresBeforeSkip: env.ESP_FAILURES_BEFORE_SKIP,
      skipSeconds: env.ESP_SKIP_SECONDS,
    },
  };
}

function storageOf(env: Env, dataDir: string): AppConfig['storage'] {
  return env.STORAGE_DRIVER === 's3'
    ? {
        driver: 's3',
        bucket: env.S3_BUCKET!,
        region: env.S3_REGION,
        endpoint: env.S3_ENDPOINT,
        accessKeyId: env.S3_ACCESS_KEY_ID,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        forcePathStyle: env.S3_FORCE_PATH_STYLE,
      }
    : { driver: 'local', dir: path.resolve(env.STORAGE_DIR ?? path.join(dataDir, 'blobs')) };
}

function tsaOf(env: Env, publicUrl: string): AppConfig['tsa'] {
  // The sandbox TSA answers on the service's own address (src/modules/sandbox/tsa/sandbox-tsa.ts).
  const tsaUrl = env.TSA_URL ?? (env.APP_ENV === 'sandbox' ? `${publicUrl}/sandbox/tsa` : undefined);
  const tsaHeader = env.TSA_AUTH_HEADER?.match(/^([^:]+):\s*(.*)$/);
  return tsaUrl
    ? {
        url: tsaUrl,
        authHeader: tsaHeader ? { name: tsaHeader[1]!.trim(), value: tsaHeader[2]!.trim() } : undefined,
        policyOid: env.TSA_POLICY_OID,
        timeoutMs: env.TSA_TIMEOUT_MS,
        retries: env.TSA_RETRIES,
      }
    : undefined;
}

function stampsOf(env: Env): AppConfig['stamps'] {
  return {
    feePerStampPaise: rupeesInPaise(env.ESTAMP_FEE_PER_STAMP),
    vendor: env.STAMP_VENDOR,
    vendorLatencyMs: env.STAMP_VENDOR_LATENCY_MS,
    vendorRejectionRate: env.STAMP_VENDOR_REJECTION_RATE,
    vendorPendingRate: env.STAMP_VENDOR_PENDING_RATE,
    vendorHangRate: env.STAMP_VENDOR_HANG_RATE,
    vendorTimeoutMs: env.STAMP_VENDOR_TIMEOUT_MS,
    procureBatch: env.STAMP_PROCURE_BATCH,
    claimSeconds: env.STAMP_CLAIM_SECONDS,
  };
}

/**
 * ESTAMP_FEE_PER_STAMP in paise. Its pattern (env-schema.ts) admits only digits with at most 2 decimals, which this
 * reads as platform/money's parseRupees does ("2.5" is 250n); the configuration imports nothing of src/, and
 * test/platform/config.test.ts holds the two equal.
 */
function rupeesInPaise(rupees: string): bigint {
  const [whole, fraction = ''] = rupees.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
}

function notificationsOf(env: Env, mailFrom: NotificationConfig['mailFrom']): NotificationConfig {
  return {
    mailFrom,
    smtpUrl: env.SMTP_URL,
    sms: env.SMS_HTTP_URL ? { url: env.SMS_HTTP_URL, token: env.SMS_HTTP_TOKEN } : undefined,
    whatsapp: env.WHATSAPP_HTTP_URL ? { url: env.WHATSAPP_HTTP_URL, token: env.WHATSAPP_HTTP_TOKEN } : undefined,
    timeoutMs: env.NOTIFY_TIMEOUT_MS,
    retryLimit: env.NOTIFY_RETRY_LIMIT,
    retryDelaySeconds: env.NOTIFY_RETRY_DELAY_SECONDS,
    linkTtlSeconds: env.NOTIFY_LINK_TTL_SECONDS,
  };
}

/** `"Name" <address>` or a bare address; without a name the platform calls itself `Esign`. */
function parseMailFrom(value: string): { name: string; address: string } | undefined {
  const parsed = addressparser(value, { flatten: true });
  const only = parsed.length === 1 ? parsed[0] : undefined;
  if (!only?.address || !/^[^@\s]+@[^@\s]+$/.test(only.address)) return undefined;
  return { name: only.name || 'Esign', address: only.address };
}
