/** Entry point of the page: pick the transport, connect the bridge, render. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { getApi, getConnection, MissingTokenError, preparePageAccess } from './api/get-api';
import { App } from './app';
import { ServicesContext, type AppServices } from './app-context';
import { connectBridge } from './bridge';
import { createCommands } from './commands';
import { showDesktopNotification } from './features/notifications/desktop-notifications';
import { startResourceRecorder } from './features/runs/charts/resource-history';
import { startThroughputRecorder } from './features/runs/charts/run-throughput';
import { startRouteSync } from './routing/route-sync';
import { focusTarget } from './store/actions';
import { showTokenField } from './api/token-field';
import { apply, appStore } from './store/app-store';
import './styles/app.css';
import './styles/links-charts.css';
import './styles/cluster-view.css';
import './styles/noise-layout.css';
import './styles/narrow-views.css';
import './styles/toasts.css';
import './styles/run-settings.css';
import './styles/jobs-sweep.css';
import './styles/output-view.css';
import './styles/run-compare.css';
import './styles/artifacts.css';

async function start(): Promise<void> {
  const root = document.getElementById('root');
  if (!root) throw new Error('index.html has no #root element');
  let services: AppServices;
  try {
    await preparePageAccess();
  } catch (error) {
    if (error instanceof MissingTokenError) {
      showTokenField(root, error.message);
      return;
    }
    throw error;
  }
  try {
    const api = getApi();
    const inElectron = !!window.gpuShare;
    services = { api, commands: createCommands(api, appStore), inElectron };
    connectBridge(api, appStore, getConnection(), {
      onNotification: (n) => {
        if (inElectron) return;
        showDesktopNotification(n, () => {
          if (n.target) apply(appStore, focusTarget, n.target);
        });
      },
    });
    startRouteSync(appStore, window);
    startThroughputRecorder(appStore);
    startResourceRecorder(appStore);
  } catch (error) {
    const message = `GPU Share could not start: ${error instanceof Error ? error.message : String(error)}`;
    const p = document.createElement('p');
    p.className = 'fatal';
    p.setAttribute('role', 'alert');
    p.textContent = message;
    root.replaceChildren(p);
    return;
  }
  createRoot(root).render(
    <StrictMode>
      <ServicesContext.Provider value={services}>
        <App />
      </ServicesContext.Provider>
    </StrictMode>,
  );
}

void start();
