/** GiB as placement reasons write them: to the nearest tenth, a trailing ".0" dropped ("16 GiB", "4.8 GiB"). */
import { MB_PER_GIB } from './demand';

export function formatGib(mb: number): string {
  return `${(mb / MB_PER_GIB).toFixed(1).replace(/\.0$/, '')} GiB`;
}
