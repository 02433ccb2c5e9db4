import type http from 'node:http';

/** Stops taking connections, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
export async function drainServer(server: http.Server, graceMs: number): Promise<void> {
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections become idle as their last response ends; close each as soon as it does.
  server.closeIdleConnections();
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await drained;
  clearInterval(sweeper);
  clearTimeout(timer);
}
