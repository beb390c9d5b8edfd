/** The page: header, navigation, the current view, and the page-wide layers (drop overlay, dialogs, toasts). */
import { useEffect, useRef, type ComponentType } from 'react';
import { ActionErrorBanner, ConnectionBanner, LoadErrorBanner } from './ui/banners';
import { ConfirmDialog } from './ui/confirm-dialog';
import { DropZone } from './features/import/drop-zone';
import { Header } from './ui/header';
import { HostKeyDialog } from './features/nodes/host-key-dialog';
import { ImportDialog } from './features/import/import-dialog';
import { Nav } from './ui/nav';
import { MissingRouteNotice } from './routing/missing-route-notice';
import { Toasts } from './features/notifications/toasts';
import { appStore, useApp } from './store/app-store';
import type { ViewName } from './store/state';
import { ArtifactsView } from './features/artifacts/artifacts-view';
import { ClusterView } from './features/cluster/cluster-view';
import { EventsView } from './features/events/events-view';
import { JobsView } from './features/jobs/jobs-view';
import { MachineView } from './features/machine/machine-view';
import { NodesView } from './features/nodes/nodes-view';
import { RunsView } from './features/runs/runs-view';
import { WorkersView } from './features/workers/workers-view';

const VIEW_COMPONENTS: Record<ViewName, ComponentType> = {
  nodes: NodesView,
  machine: MachineView,
  workers: WorkersView,
  runs: RunsView,
  jobs: JobsView,
  artifacts: ArtifactsView,
  events: EventsView,
  cluster: ClusterView,
};

export function App() {
  const view = useApp((s) => s.view);
  const loaded = useApp((s) => s.loaded);
  const first = useRef(true);

  // After a view change, move focus to its heading so keyboard and screen reader users land in the new content.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    if (view === 'workers' && appStore.getState().highlightedWorkerId !== null) return;
    document.getElementById('view-title')?.focus({ preventScroll: false });
  }, [view]);

  const View = VIEW_COMPONENTS[view];
  return (
    <div className="app" data-ready={loaded ? 'true' : 'false'} data-view={view}>
      {/* Not href="#main": the address's hash is the page's route (routing/route.ts). */}
      <a
        className="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <Header />
      <Nav />
      <ConnectionBanner />
      <LoadErrorBanner />
      <main id="main" className="main" tabIndex={-1}>
        <ActionErrorBanner />
        <MissingRouteNotice />
        {loaded ? <View /> : <p className="loading muted">Loading GPU Share…</p>}
      </main>
      <DropZone />
      <ImportDialog />
      <ConfirmDialog />
      <HostKeyDialog />
      <Toasts />
    </div>
  );
}
