/** GiB as placement reasons write them: one decimal, a trailing ".0" dropped ("16 GiB", "4.8 GiB"). */
import { MB_PER_GIB } from './demand';

/**
 * `round` says which way to round to the tenth: what a job needs rounds up and what a node has rounds down,
 * so a reason never reads "needs 5 GiB, 5 GiB left".
 */
export function formatGib(mb: number, round: 'up' | 'down'): string {
  const tenths = (mb / MB_PER_GIB) * 10;
  const rounded = (round === 'up' ? Math.ceil(tenths - 1e-9) : Math.floor(tenths + 1e-9)) / 10;
  return `${rounded.toFixed(1).replace(/\.0$/, '')} GiB`;
}
