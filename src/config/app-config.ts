/** The configuration's shape, as the service reads it (load-config.ts makes it from the environment). */
import type { Env } from './env-schema';

export interface AppConfig {
  env: 'sandbox' | 'production';
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  /** DATABASE_LISTEN_URL: where the event bus LISTENs; unset, DATABASE_URL (or the embedded database). */
  databaseListenUrl?: string;
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
  /** A running bulk whose job made no rows for this long is taken up again by the sweep (its worker died). */
  bulkStaleSeconds: number;
  /** A bulk's invites go at most this many a second (each row's invites wait their turn in the queue). */
  bulkInvitesPerSecond: number;
  trustProxy: string | undefined;
  /** `location_source: ip`: a provider URL template with `{ip}`; none by default (the address is still recorded). */
  ipGeolocationUrl?: string;
  shutdownTimeoutMs: number;
  dbPoolMax: number;
  /** The PKCS#12 suresign signatures are made with; unset in sandbox: a generated chain. */
  platformSigningPfx?: { path: string; password: string };
  /** TRUST_ANCHORS: a PEM bundle's path, or PEM text (read when signatures are verified). */
  trustAnchors?: string;
  /**
   * DSC signers (sign_type dsc): the CAs their certificates must chain to (DSC_TRUST_ANCHORS, PEM; in sandbox the
   * sandbox root is added), the bridge the signing page talks to, its download and help, and how long a prepared
   * signature waits for the token.
   */
  dsc: { trustAnchors?: string; bridgeUrl: string; downloadUrl: string; helpUrl: string; signTimeoutSeconds: number };
  /** PADES_LTV: a completed document gets its /DSS and a document time-stamp (PAdES B-LT, B-LTA). */
  padesLtv: boolean;
  /**
   * LTV_REVOCATION_TIMEOUT_MS, LTV_REVOCATION_BUDGET_MS: the URLs come from certificates anyone can put in a document,
   * so the time the last signature's step waits on them is bounded in all (docs/signing.md).
   */
  ltvRevocation: { timeoutMs: number; budgetMs: number };
  /**
   * The RFC 3161 time-stamping authority every signature is stamped by (PAdES B-T). In sandbox without TSA_URL, the
   * service's own sandbox TSA; undefined only in production with ALLOW_SIGNING_WITHOUT_TIMESTAMP=true.
   */
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
  /** ESP failover: the configured groups (`ESP_GROUP_<NAME>`, ordered ESP names) and when a failing ESP is skipped. */
  espRouting: { groups: Record<string, string[]>; failuresBeforeSkip: number; skipSeconds: number };
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
  /** 2.1: how long the check that the ESP's gateway answers at all waits, before the signer is sent there. */
  probeTimeoutSeconds: number;
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
