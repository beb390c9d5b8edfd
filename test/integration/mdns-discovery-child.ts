/**
 * A process for mdns-discovery.test.ts, run inside a namespace host: `advertise PORT CERT [CLUSTER]` announces
 * a coordinator until killed; `browse WAIT_MS [CLUSTER]` prints the coordinators it heard as one JSON line;
 * `raw WAIT_MS` prints every `_gpu-share._tcp` TXT record heard, unfiltered (to check what crosses the wire).
 */
import { Bonjour } from 'bonjour-service';
import { startAdvertiser } from '../../src-main/platform/discovery/mdns-advertiser';
import { discoverCoordinators } from '../../src-main/platform/discovery/mdns-browser';
import { SERVICE_TYPE } from '../../src-main/platform/discovery/discovery-record';

const [mode, a, b, c] = process.argv.slice(2);
const problem = (message: string) => process.stderr.write(`problem: ${message}\n`);

if (mode === 'advertise') {
  const advertiser = startAdvertiser({ port: Number(a), certSha256: b!, version: '0.1.0', clusterName: c, onProblem: problem });
  process.stdout.write('advertising\n');
  process.on('SIGTERM', () => void advertiser.stop().then(() => process.exit(0)));
} else if (mode === 'browse') {
  void discoverCoordinators({ waitMs: Number(a), clusterName: b, onProblem: problem }).then((found) => {
    process.stdout.write(`${JSON.stringify(found)}\n`);
  });
} else if (mode === 'raw') {
  const bonjour = new Bonjour();
  const browser = bonjour.find({ type: SERVICE_TYPE });
  setTimeout(() => {
    process.stdout.write(`${JSON.stringify(browser.services.map((s) => s.txt as unknown))}\n`);
    bonjour.destroy();
  }, Number(a));
} else {
  problem(`unknown mode ${mode}`);
  process.exit(2);
}
