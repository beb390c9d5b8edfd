/**
 * CPU milliseconds `work` took in this process. "Parses quickly" checks guard against quadratic or exponential
 * work; measured by the wall clock they also fail when other processes hold the cores (a loaded CI machine), which
 * says nothing about the code.
 */
export function cpuMsOf<T>(work: () => T): { result: T; ms: number } {
  const before = process.cpuUsage();
  const result = work();
  const used = process.cpuUsage(before);
  return { result, ms: (used.user + used.system) / 1000 };
}
