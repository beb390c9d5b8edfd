/** A coloured state label that never relies on colour alone: it always carries its text (and a shape). */
import type { Badge as BadgeModel } from '../store/derive';

export function Badge({ badge, className }: { badge: BadgeModel; className?: string }) {
  return (
    <span className={`badge tone-${badge.tone}${className ? ` ${className}` : ''}`} title={badge.detail}>
      <span className="badge-dot" aria-hidden="true" />
      {badge.text}
    </span>
  );
}
