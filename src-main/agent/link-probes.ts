/**
 * The agent's part in measuring links (issue 16, item 1), kept out of worker-agent.ts: the probe server it runs
 * (its port goes in the join), and the two instructions — `accept-link-probe` (expect this token) and
 * `measure-links` (probe these targets, one at a time, and report `links`). A measurement runs beside training
 * and jobs; a second one waits for the first, so this agent never sends two probes at once.
 */
import type { AcceptLinkProbeInstruction, LinksReport, MeasureLinksInstruction } from '../../src-shared/links/link-probe-protocol';
import { measureLinks, type LinkProbeClientOptions } from './link-probe-client';
import { LinkProbeServer, type LinkProbeServerOptions } from './link-probe-server';

export class AgentLinkProbes {
  private readonly server: LinkProbeServer;
  private chain: Promise<void> = Promise.resolve();
  private port: number | null = null;

  constructor(private readonly opts: LinkProbeServerOptions & { client?: LinkProbeClientOptions } = {}) {
    this.server = new LinkProbeServer(opts);
  }

  /** Listens on an ephemeral port on every interface; resolves with it, or undefined when it cannot listen (links are then not measured). */
  async listen(): Promise<number | undefined> {
    try {
      this.port = await this.server.listen(0);
      this.opts.log?.(`link probes: listening on port ${this.port} (every interface; only probes the coordinator announced are answered)`);
      return this.port;
    } catch (error) {
      this.opts.log?.(`link probe server could not listen, so links to this machine are not measured: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }

  /** Obeys a link instruction; `report` gets the `links` report of a measurement. */
  obey(instruction: AcceptLinkProbeInstruction | MeasureLinksInstruction, report: (r: LinksReport) => void): void {
    if (instruction.kind === 'accept-link-probe') {
      this.server.expect(instruction.token, instruction.fromNode, instruction.expiresInMs, instruction.fromAddresses);
      return;
    }
    this.chain = this.chain.then(async () => {
      const results = await measureLinks(instruction, this.opts.client);
      report({ type: 'links', probeId: instruction.probeId, results });
    });
  }

  async close(): Promise<void> {
    if (this.port !== null) await this.server.close();
  }
}
