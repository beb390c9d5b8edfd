/**
 * The app bar: name, the cluster at a glance (machines, usable VRAM, adapter slots: what the workers reported, a machine
 * once, declared nodes without a worker shown offline), connection, notifications.
 */
import { useServices } from '../app-context';
import { formatMb } from './format';
import { headerCapacity } from '../features/nodes/node-status';
import { useApp } from '../store/app-store';
import { DesktopNotificationsButton } from '../features/notifications/desktop-notifications-button';
import { LogoMark } from './icons';
import { NotificationCenter } from '../features/notifications/notification-history';

/** A figure; `online` and `offline` (each its tooltip) draw it joined to the figure before it, green or muted. */
function Stat({ value, label, testId, online, offline }: { value: string; label: string; testId: string; online?: string; offline?: string }) {
  return (
    <div className={`stat${online ? ' stat-online' : offline ? ' stat-offline' : ''}`} data-testid={testId} title={online ?? offline}>
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
    </div>
  );
}

export function Header() {
  const cluster = useApp((s) => s.cluster);
  const status = useApp((s) => s.connection.status);
  const { inElectron } = useServices();
  const workers = useApp((s) => s.workers);
  // Every machine once: declared nodes (those pointing at this machine counted once) and live workers no node claims.
  const { total, online, offline } = headerCapacity(cluster, workers);
  return (
    <header className="app-header">
      <div className="brand">
        <LogoMark />
        <span className="brand-name">GPU Share</span>
      </div>
      <div className="stats" aria-label="Cluster at a glance">
        {/* Every machine (the file's nodes with what they declare, other workers with what they reported), each followed by what those online offer. */}
        <Stat testId="stat-nodes" value={String(total.nodes)} label={total.nodes === 1 ? 'node' : 'nodes'} />
        <Stat testId="stat-nodes-online" value={String(online.nodes)} label="online" online="machines with an active worker" />
        {offline.length > 0 && <Stat testId="stat-nodes-offline" value={String(offline.length)} label="offline" offline={`Declared in cluster.yaml, no worker online: ${offline.join(', ')}`} />}
        <Stat testId="stat-vram" value={formatMb(total.usableMb)} label="usable VRAM" />
        <Stat testId="stat-vram-online" value={formatMb(online.usableMb)} label="online" online="usable VRAM of the GPUs the active workers reported" />
        <Stat testId="stat-slots" value={String(total.slots)} label={total.slots === 1 ? 'adapter slot' : 'adapter slots'} />
        <Stat testId="stat-slots-online" value={String(online.slots)} label="online" online="adapter slots of the machines with an active worker" />
      </div>
      <div className="header-end">
        {!inElectron && <DesktopNotificationsButton />}
        <NotificationCenter />
        <span className={`conn conn-${status}`} data-testid="connection" data-status={status}>
          <span className="badge-dot" aria-hidden="true" />
          {status === 'open' ? 'Connected' : status === 'closed' ? 'Closed' : 'Connecting…'}
        </span>
      </div>
    </header>
  );
}
