import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import type { Signer } from '../../esign/signer-side';
import { probeEsp, recordEspOutcome, skippedEsps } from '../../signing';
import { handOverThroughServer, type EspStart } from './esp-handoff';
import { EspTransaction } from './esp-transaction.entity';

/** An ESP passed over in one start, and why: shown to the signer (`failover`) and in the session's audit trail. */
export interface EspFailure {
  backend: string;
  problem: string;
}

/** What /signer-api/esp/start answers: the form, the ESP it goes to, and the ones passed over on the way. */
export type EspStartAnswer = EspStart & { backend: string; failover: EspFailure[] };

/** A transaction opened with one ESP (aadhaar-signing.ts): its form, and the signed request a 3.2 ESP is sent. */
export type OpenTransaction = (esp: EspConfig, passedOver: EspFailure[]) => Promise<{ form: EspStart; xml: string }>;

/**
 * ESP failover: the session's backend names ESPs in order (esp-route.ts); each is tried at most once per start,
 * and the signer goes to the first that answers. Passed over, at no cost to the signer's attempts: an ESP skipped
 * for failing repeatedly (esp-health.ts), a 2.1 ESP whose gateway does not answer the check, a 3.2 ESP that does
 * not acknowledge the request (its transaction fails as `esp_unreachable` or `esp_ack_invalid`), and the ESP the
 * signer's own browser could not reach (`signerCouldNotReach`, only while another remains). A 3.2 ESP's signed
 * refusal is its answer and ends the start. Each failure this service observed counts in the ESP's health.
 * None answering: `503 service_unavailable` naming each, the signer's attempts untouched.
 */
export async function startOnRoute(
  services: AppServices,
  em: EntityManager,
  at: { signer: Signer; route: EspConfig[]; origin: RequestOrigin; signerCouldNotReach: string | null },
  open: OpenTransaction,
): Promise<EspStartAnswer> {
  const passedOver: EspFailure[] = [];
  /** The failures not yet in the audit trail (a failed 3.2 transaction is there as `esp_failed`). */
  const unaudited: EspFailure[] = [];
  const pass = (failure: EspFailure, audited = false) => {
    passedOver.push(failure);
    if (!audited) unaudited.push(failure);
  };
  let lastRefusal: AppError | null = null;
  const skipped = await skippedEsps(
    em,
    at.route.map((esp) => esp.name),
  );
  for (const esp of at.route) {
    if (esp.name === at.signerCouldNotReach && at.route.length > 1) {
      pass({ backend: esp.name, problem: "the signer's browser could not open its pages" });
      continue;
    }
    const until = skipped.get(esp.name);
    if (until) {
      pass({ backend: esp.name, problem: `skipped until ${until.toISOString()}: it failed repeatedly` });
      continue;
    }
    if (esp.version === '2.1') {
      const reach = await probeEsp(esp);
      if (!esp.builtIn) await recordEspOutcome(services, em, esp.name, reach);
      if (!reach.ok) {
        pass({ backend: esp.name, problem: reach.problem });
        continue;
      }
      const opened = await open(esp, unaudited.splice(0));
      return { ...opened.form, backend: esp.name, failover: passedOver };
    }
    const opened = await open(esp, unaudited.splice(0));
    const handed = await handOverThroughServer(services, em, esp, { ...opened.form, xml: opened.xml }, at.origin);
    if (handed.ok) {
      await recordEspOutcome(services, em, esp.name, { ok: true });
      return { ...handed.form, backend: esp.name, failover: passedOver };
    }
    if (!handed.failover) throw handed.error;
    await recordEspOutcome(services, em, esp.name, { ok: false, problem: handed.problem });
    pass({ backend: esp.name, problem: handed.problem }, true);
    lastRefusal = handed.error;
  }
  await auditPassedOver(em, at, unaudited);
  // One ESP, tried and failed: its own answer, as before failover existed.
  if (lastRefusal && passedOver.length === 1) throw lastRefusal;
  throw new AppError('service_unavailable', {
    message: `no eSign Service Provider of this session could take the request (${passedOver.map((failure) => failure.backend).join(', ')}); no attempt was used: try again later`,
    errors: passedOver.map((failure) => ({ field: 'esp', problem: `${failure.backend}: ${failure.problem}` })),
  });
}

/** Each ESP passed over, as `esp_unavailable` in the session's audit trail (the backend and why). */
export function auditEspFailures(
  em: EntityManager,
  at: { session: { id: string }; signer: { id: string }; origin: RequestOrigin },
  failures: EspFailure[],
): void {
  for (const failure of failures) {
    recordAudit(em, {
      session: at.session,
      signer: at.signer,
      event: 'esp_unavailable',
      origin: at.origin,
      details: { ...failure },
    });
  }
}

async function auditPassedOver(em: EntityManager, at: { signer: Signer; origin: RequestOrigin }, failures: EspFailure[]) {
  if (failures.length === 0) return;
  const writer = em.fork();
  auditEspFailures(writer, { session: at.signer.session, signer: at.signer, origin: at.origin }, failures);
  await writer.flush();
}

/** The ESP of the signer's open transaction: the one their browser could not reach, when they say so on restart. */
export async function backendOfOpenTransaction(em: EntityManager, signer: Signer): Promise<string | null> {
  const open = await em.fork().findOne(EspTransaction, { signer: signer.id, status: 'pending' }, { fields: ['backend'] });
  return open?.backend ?? null;
}
