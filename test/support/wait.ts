// Waiting on conditions, never on time: a deadline only bounds how long a
// test may wait before it reports what did not happen.

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves once `condition` holds; fails after `ms`, or at once when `guard`
 * throws. A condition that throws counts as not met.
 */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, ms: number, guard = () => {}): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    guard();
    let met = false;
    try {
      met = await condition();
    } catch {
      met = false;
    }
    if (met) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await pause(25);
  }
}
