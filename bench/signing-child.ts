/**
 * One signing (or one baseline: the physical limit of a signature) in a process of its own, so that its peak memory
 * can be read from the kernel (VmHWM) instead of sampled. Prints `{ms, peakMB}` as JSON.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { signDetachedCms, type SigningIdentity } from '../src/modules/signing/cms-sign';
import { signIncrementally } from '../src/modules/signing/pdf/sign-incrementally';

function kernelMB(field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '0')![1]) / 1024;
}

/** Signatures of the small document before the measured one. */
const WARM_UP_RUNS = 30;

async function main() {
  const [mode, file, identityFile, warmUpFile] = process.argv.slice(2);
  const identity = JSON.parse(readFileSync(identityFile, 'utf8')) as SigningIdentity;
  const key = createPrivateKey(identity.privateKeyPem);
  const run = async (pdf: Buffer) => {
    if (mode === 'baseline') {
      // What no signature can do without: one SHA-256 pass over the file and one RSA signature (over a digest).
      const digest = createHash('sha256').update(pdf).digest();
      sign('sha256', digest, key);
    } else {
      await signIncrementally(pdf, {
        fieldName: 'bench',
        signerName: 'Bench Signer',
        time: new Date(),
        appearanceLines: ['Digitally signed by Bench Signer'],
        sign: (ranges) => signDetachedCms(ranges, identity),
      });
    }
  };
  // A running service has signed many documents: its code is compiled and optimised, not just loaded.
  if (warmUpFile) for (let i = 0; i < WARM_UP_RUNS; i++) await run(readFileSync(warmUpFile));
  const pdf = readFileSync(file);
  (globalThis as { gc?: () => void }).gc?.();
  const before = kernelMB('VmRSS');
  const began = process.hrtime.bigint();
  await run(pdf);
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  process.stdout.write(JSON.stringify({ ms, peakMB: Math.max(0, kernelMB('VmHWM') - before) }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
