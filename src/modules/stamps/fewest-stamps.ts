/** How many stamps of one duty are free. */
export interface StampStock {
  dutyPaise: bigint;
  count: number;
}

const SEARCH_BUDGET = 200_000;

/**
 * The combination of stamps whose duties add up exactly to `target` with the fewest stamps (so one 500
 * before five 100s, and two 250s when no 500 is free). Among equally short combinations, larger duties win.
 * A depth-first search over duties, largest first, cut by the best length found so far; duties are few in
 * practice, and a search budget bounds pathological stock. Returns duty -> how many, or null when none adds up.
 */
export function fewestStamps(target: bigint, stock: StampStock[]): Map<bigint, number> | null {
  const duties = stock.filter((s) => s.count > 0 && s.dutyPaise > 0n).sort((a, b) => (a.dutyPaise > b.dutyPaise ? -1 : 1));
  let best: number[] | null = null;
  let bestCount = Infinity;
  let budget = SEARCH_BUDGET;
  const taken: number[] = new Array(duties.length).fill(0);

  const search = (index: number, remaining: bigint, used: number): void => {
    if (budget-- <= 0) return;
    if (remaining === 0n) {
      if (used < bestCount) {
        bestCount = used;
        best = [...taken];
      }
      return;
    }
    if (index >= duties.length) return;
    const { dutyPaise, count } = duties[index];
    // Every further stamp is at most this duty: fewer than this many more cannot reach the target.
    const atLeast = Number((remaining + dutyPaise - 1n) / dutyPaise);
    if (used + atLeast >= bestCount) return;
    const most = Math.min(count, Number(remaining / dutyPaise));
    for (let k = most; k >= 0; k--) {
      taken[index] = k;
      search(index + 1, remaining - BigInt(k) * dutyPaise, used + k);
    }
    taken[index] = 0;
  };
  search(0, target, 0);
  if (!best) return null;
  const chosen: number[] = best;
  return new Map(duties.map((d, i) => [d.dutyPaise, chosen[i]] as const).filter(([, n]) => n > 0));
}
