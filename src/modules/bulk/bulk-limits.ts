/**
 * The documented limits of bulk send (docs/bulk.md): rows per bulk, bulks of one account running at once, how often
 * progress is announced; and how the job paces itself.
 */
export const BULK_LIMITS = {
  rows: 10_000,
  runningPerAccount: 5,
  keyLength: 200,
  /** `esign.bulk.progress` goes at most this often per bulk (the subscription hears every chunk). */
  progressSeconds: 5,
  /**
   * Jobs that work one bulk at once, each claiming its own rows: while one plans its chunk another's statements run
   * (bench, 5,000 rows written a chunk at a time: 609 rows/s with one, 634 with two, 800 to 900 with four, 803 with
   * eight).
   */
  parallelJobs: 4,
  /** Rows made into sessions in one database transaction (those that plan, written together). */
  chunkRows: 25,
  /** A job makes rows for about this long, then queues its continuation (jobs stay short; a killed one loses little). */
  sliceMs: 10_000,
} as const;
