/** The app bar: name, the cluster at a glance (nodes, usable VRAM, adapter slots; this machine once), connection, notifications. */
import { useServices } from '../app-context';
import { formatMb } from './format';
import { headerCapacity } from '../features/nodes/node-status';
import { useApp } from '../store/app-store';
import { DesktopNotificationsButton } from '../features/notifications/desktop-notifications-button';
import { LogoMark } from './icons';
import { NotificationCenter } from '../features/notifications/notification-history';

function Stat({ value, label, testId, online }: { value: string; label: string; testId: string; online?: string }) {
  return (
    <div className={`stat${online ? ' stat-online' : ''}`} data-testid={testId} title={online}>
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
  // Nodes that point at this machine (a localhost node and the own worker's) count once, declared and online.
  const { declared: totals, online } = headerCapacity(cluster, workers);
  return (
    <header className="app-header">
      <div className="brand">
        <LogoMark />
        <span className="brand-name">GPU Share</span>
      </div>
      <div className="stats" aria-label="Cluster at a glance">
        {/* Declared (everything in cluster.yaml), each followed by what declared nodes with an active worker offer. */}
        <Stat testId="stat-nodes" value={String(totals.nodes)} label={totals.nodes === 1 ? 'node' : 'nodes'} />
        <Stat testId="stat-nodes-online" value={String(online.nodes)} label="online" online="declared nodes with an active worker" />
        <Stat testId="stat-vram" value={formatMb(totals.usableMb)} label="usable VRAM" />
        <Stat testId="stat-vram-online" value={formatMb(online.usableMb)} label="online" online="usable VRAM of the GPUs the active workers of declared nodes reported" />
        <Stat testId="stat-slots" value={String(totals.slots)} label={totals.slots === 1 ? 'adapter slot' : 'adapter slots'} />
        <Stat testId="stat-slots-online" value={String(online.slots)} label="online" online="adapter slots of declared nodes with an active worker" />
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
