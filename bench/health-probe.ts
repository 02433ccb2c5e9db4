import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';

/** How often /healthz is asked. */
const PROBE_EVERY_MS = 20;

export interface HealthProbe {
  /** Ends the probe; the latency of each answer, in ms. */
  stop(): Promise<number[]>;
}

/**
 * /healthz every PROBE_EVERY_MS over one keep-alive connection, from now until stop(): an answer waits for whatever
 * holds the service's event loop, so the latencies show how long it was held. In this process, or (`ownProcess`)
 * in a process of its own, when this one is busy itself (thousands of clients to read) and would delay the answers.
 */
export function probeHealth(url: string, options: { ownProcess?: boolean } = {}): HealthProbe {
  return options.ownProcess ? probeFromChild(url) : probeHere(url);
}

/** The probe for `durationMs`, in this process. */
export async function probeHealthFor(url: string, durationMs: number): Promise<number[]> {
  const probe = probeHere(url);
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  return probe.stop();
}

function probeHere(url: string): HealthProbe {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const began = performance.now();
      await new Promise<void>((resolve, reject) => {
        http
          .get(`${url}/healthz`, { agent }, (response) => {
            response.resume();
            response.on('end', () => resolve());
          })
          .on('error', reject);
      });
      latencies.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      try {
        await running;
      } finally {
        agent.destroy();
      }
      return latencies;
    },
  };
}

/** This file run as a child: it probes until its stdin ends, then prints the latencies as JSON. */
function probeFromChild(url: string): HealthProbe {
  const child = spawn(process.execPath, [__filename, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = once(child, 'exit');
  return {
    stop: async () => {
      child.stdin!.end();
      const [code] = (await exited) as [number | null];
      process.removeListener('exit', killOnExit);
      if (code !== 0) throw new Error(`the /healthz probe process ended with ${code}: ${output}`);
      return JSON.parse(output) as number[];
    },
  };
}

if (require.main === module) {
  const probe = probeHere(process.argv[2]);
  process.stdin.resume();
  process.stdin.once('end', () => {
    void probe.stop().then(
      (latencies) => process.stdout.write(JSON.stringify(latencies)),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
