import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { SecretBox } from '../../platform/crypto/secret-box';
import type { AppServices } from '../../platform/services';
import type { SigningIdentity } from './cms-sign';
import { PlatformKey } from './platform-key.entity';

function box(services: AppServices): SecretBox {
  return new SecretBox(services.config.secretsEncryptionKey, 'platform-key');
}

/**
 * A key the platform keeps, by name: made by `generate` the first time anyone needs it and kept sealed in
 * the database, so that every process uses the same one (a concurrent first generation loses to the winner).
 */
export async function platformKey(
  services: AppServices,
  em: EntityManager,
  name: string,
  generate: () => SigningIdentity,
): Promise<SigningIdentity> {
  const stored = await em.fork().findOne(PlatformKey, { name });
  if (stored) return JSON.parse(box(services).openText(stored.sealed)) as SigningIdentity;
  const identity = generate();
  try {
    // Made on the fork that writes it: `em.create` would also schedule the row on the caller's entity manager (MikroORM's
    // persistOnCreate), whose own flush then inserted it again and failed the caller's transaction for the loser of a
    // concurrent first generation (test/scale: the first signatures on three processes answered 409).
    const fork = em.fork();
    await fork.persistAndFlush(fork.create(PlatformKey, { name, sealed: box(services).seal(JSON.stringify(identity)) }));
    return identity;
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    const winner = await em.fork().findOneOrFail(PlatformKey, { name });
    return JSON.parse(box(services).openText(winner.sealed)) as SigningIdentity;
  }
}
