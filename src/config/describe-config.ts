import type { AppConfig } from './app-config';

/** The configuration as it may be logged: secrets and credentials masked. */
export function describeConfig(config: AppConfig): Record<string, unknown> {
  const mask = (v: string | undefined) => (v ? '***' : undefined);
  const maskUserinfo = (url: string | undefined) => url?.replace(/\/\/([^@/]*)@/, '//***@');
  const gateway = (g: { url: string; token?: string } | undefined) => g && { url: maskUserinfo(g.url), token: mask(g.token) };
  return {
    ...config,
    databaseUrl: config.databaseUrl ? maskUserinfo(config.databaseUrl) : 'embedded',
    databaseListenUrl: maskUserinfo(config.databaseListenUrl),
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
