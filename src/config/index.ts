/**
 * config: typed, validated settings, read once from the environment (README.md, Configuration, lists the variables). Read
 * first and by everyone, it imports nothing of src/ outside this folder.
 */
export type { AppConfig, EspConfig, NotificationConfig } from './app-config';
export { describeConfig } from './describe-config';
export { DEFAULT_SECRETS, type Env } from './env-schema';
export { ConfigError, loadConfig } from './load-config';
