import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

/**
 * One PostgreSQL for the whole run: DATABASE_URL when given (it must allow CREATE DATABASE), otherwise
 * an embedded cluster in a temporary directory. Each test file then makes a database of its own.
 */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide('pgAdminUrl', process.env.DATABASE_URL);
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'esign-test-'));
  await chmod(dir, 0o755); // postgres runs as its own user when the tests run as root
  const cluster = await startEmbeddedPostgres(path.join(dir, 'pg'));
  project.provide('pgAdminUrl', cluster.adminUrl);
  return async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
