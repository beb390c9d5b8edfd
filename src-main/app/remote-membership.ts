/**
 * Which coordinator this machine trains for: the app's own, or another machine's cluster that the person joined
 * from the Workers view. A machine can only train for one cluster at a time, so joining elsewhere stops the
 * app's own in-process worker first and every way out (a failed join, Leave, a drain by the other coordinator)
 * brings it back. The other coordinator is reached by a real WorkerAgent, exactly as `gpu-share worker --join`
 * would; this class only follows that agent and says in one sentence what is going on.
 *
 * The join token is a secret of the other cluster: it is kept in memory only, and blanked out of every message
 * and log line that leaves this class.
 */
import type { MembershipState } from '../../src-shared/ipc';
import { JoinError, WorkerAgent, type AgentExit, type WorkerAgentOptions } from '../agent/worker-agent';
import { parseCoordinatorUrl } from '../agent/coordinator-client';
import { clearTextProblem } from '../../src-shared/cluster/clear-text';
import { RequestError } from './ipc-dispatch';
import type { Clock } from '../platform/ports';

/** This machine's own worker, as the core runs it against its own coordinator. */
export interface LocalWorkerControl {
  /** Stops it (it says goodbye to the app's coordinator); resolves when its training is gone. */
  stop(reason: string): Promise<void>;
  /** Starts a fresh one; does nothing while one is running. */
  start(): void;
}

export interface RemoteMembershipOptions {
  clock: Clock;
  /** Everything the remote agent needs besides where to join: pty, dataDir, env… */
  agent: Omit<WorkerAgentOptions, 'coordinatorUrl' | 'token' | 'name' | 'log' | 'clock' | 'certSha256'>;
  /** Node name used when the join gives none (this machine's name in its own cluster). */
  defaultName: () => string;
  /** Absent when the app runs without a local worker (`gpu-share serve --no-local-worker`). */
  localWorker?: LocalWorkerControl;
  onChange: (state: MembershipState) => void;
  /** Changes the person did not ask for and should hear about even in another view: lost, drained. */
  onAlert?: (alert: { title: string; body: string; severity: 'info' | 'warning' }) => void;
  /** The remote agent's own log lines (token blanked). */
  log?: (line: string) => void;
  /** How often the agent is looked at while it exists, for "lost for N s"; default 250 ms. */
  pollMs?: number;
}

export interface JoinRequest {
  url: string;
  token: string;
  name?: string | undefined;
  /** SHA-256 fingerprint of an https coordinator's self-signed certificate, which the agent pins. */
  certSha256?: string | undefined;
}

const HIDDEN = '[token hidden]';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?)]$/.test(t) ? t : `${t}.`;
}

export class RemoteMembership {
  private readonly opts: RemoteMembershipOptions;
  private current: MembershipState;
  private agent: WorkerAgent | null = null;
  /** Bumped by every join, leave and stop: a join that finds it changed was overtaken and touches nothing. */
  private attempt = 0;
  private joining: Promise<void> | null = null;
  private leaving: Promise<MembershipState> | null = null;
  private stopped = false;
  private token = '';
  private poll: { cancel(): void } | null = null;
  /** Monotonic ms of the last moment the agent was seen joined; "lost for N s" counts from here. */
  private lastContactAt = 0;
  /** Whether training ran here when the agent was last seen joined (the lost message says it was stopped). */
  private wasTraining = false;

  constructor(opts: RemoteMembershipOptions) {
    this.opts = opts;
    this.current = this.ownState();
  }

  state(): MembershipState {
    return this.current;
  }

  /**
   * Joins the coordinator at `url`. Resolves with the outcome: 'joined', or 'error' with what to do (a failed
   * join is an answer, not an exception). Throws a RequestError only when the request itself is refused: a bad
   * URL, or this machine is already with another cluster.
   */
  join(req: JoinRequest): Promise<MembershipState> {
    const parsed = parseCoordinatorUrl(req.url.trim());
    if (!parsed.ok) return Promise.reject(new RequestError(`Cannot join: ${parsed.message}.`));
    const clear = clearTextProblem(parsed.url, 'panel');
    if (clear) return Promise.reject(new RequestError(`Cannot join: ${clear}`));
    if (this.stopped) return Promise.reject(new RequestError('Cannot join: the app is shutting down.'));
    const { mode, url } = this.current;
    if (this.leaving) return Promise.reject(new RequestError(`Cannot join yet: this machine is still leaving ${url}. Try again in a moment.`));
    if (mode === 'joining' || mode === 'joined' || mode === 'lost') {
      const what = mode === 'joining' ? 'is joining' : 'is a worker of';
      return Promise.reject(new RequestError(`This machine ${what} ${url} already: press Leave first, then join the other cluster.`));
    }
    // The origin only: the agent joins at fixed API paths, and a trailing slash must not make a second identity.
    const target = parsed.url.origin;
    const node = req.name?.trim() || this.opts.defaultName();
    const attempt = ++this.attempt;
    this.token = req.token.trim();
    this.wasTraining = false;
    this.set({ mode: 'joining', url: target, workerId: null, node, message: `Joining ${target} as ${node}…` });
    const done = this.runJoin(target, node, attempt, req.certSha256?.trim() || undefined);
    const tracked: Promise<void> = done.finally(() => {
      if (this.joining === tracked) this.joining = null;
    });
    this.joining = tracked;
    return done.then(() => this.current);
  }

  /** Leaves the other cluster (its coordinator hears the goodbye) and gives this machine back to the app's own. */
  leave(): Promise<MembershipState> {
    if (this.leaving) return this.leaving;
    const { mode, url } = this.current;
    if (mode === 'own-coordinator' || mode === 'error') {
      if (mode === 'error') this.set(this.ownState());
      return Promise.resolve(this.current);
    }
    this.attempt++;
    const agent = this.agent;
    this.leaving = (async () => {
      this.set({ ...this.current, message: `Leaving ${url}…` });
      await this.stopRemote(agent, 'left from the app');
      await this.joining; // a join overtaken mid-way has finished stopping the local worker by now
      if (this.stopped) return this.current;
      this.opts.localWorker?.start();
      this.set(this.ownState(`Left ${url}; ${this.backHome()}`));
      return this.current;
    })().finally(() => {
      this.leaving = null;
    });
    return this.leaving;
  }

  /** The app is shutting down: stop the remote agent (it says goodbye) and do not start the local worker again. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.attempt++;
    await this.leaving?.catch(() => undefined);
    await this.stopRemote(this.agent, 'the app is shutting down');
    await this.joining;
    this.token = '';
  }

  // -------------------------------------------------------------------------------------------------------

  private async runJoin(url: string, node: string, attempt: number, certSha256: string | undefined): Promise<void> {
    try {
      await this.opts.localWorker?.stop(`this machine is joining the cluster at ${url}`);
    } catch (error) {
      this.opts.log?.(`the local worker did not stop cleanly: ${this.hide(messageOf(error))}`);
    }
    if (attempt !== this.attempt) return; // Leave (or shutdown) came first: it restores what needs restoring
    let agent: WorkerAgent | null = null;
    try {
      const created = new WorkerAgent({
        warmLauncher: true,
        ...this.opts.agent,
        clock: this.opts.clock,
        coordinatorUrl: url,
        token: this.token,
        name: node,
        ...(certSha256 ? { certSha256 } : {}),
        local: false,
        log: (line) => {
          this.opts.log?.(this.hide(line));
          this.observe(created);
        },
      });
      agent = created;
      this.agent = created;
      created.onExit((exit) => this.onAgentExit(created, exit));
      this.poll?.cancel();
      this.poll = this.opts.clock.setInterval(() => this.observe(created), this.opts.pollMs ?? 250);
      const joined = await created.start();
      if (attempt !== this.attempt) return;
      this.lastContactAt = this.opts.clock.monotonic();
      this.set({ mode: 'joined', url, workerId: joined.workerId, node, message: `Joined ${url} as worker ${joined.workerId} (${node})` });
    } catch (error) {
      if (attempt !== this.attempt) return;
      if (agent) this.dropAgent(agent);
      if (!this.stopped) this.opts.localWorker?.start();
      this.set({ mode: 'error', url, workerId: null, node, message: `${this.describeJoinFailure(error, url)} ${capitalize(this.backHome())}` });
    }
  }

  /** Follows the agent: joined ↔ lost, with the silence counted in whole seconds while lost. */
  private observe(agent: WorkerAgent): void {
    if (agent !== this.agent || this.leaving || this.stopped) return;
    const status = agent.status();
    const { url, node } = this.current;
    const now = this.opts.clock.monotonic();
    if (status.phase === 'joined' && status.workerId !== null) {
      this.lastContactAt = now;
      this.wasTraining = status.runs.length > 0;
      if (this.current.mode === 'lost') {
        this.set({ mode: 'joined', url, workerId: status.workerId, node, message: `Joined ${url} again as worker ${status.workerId} (${node})` });
      }
      // From 'joining' the outcome is set where start() returns, with the join's own answer.
    } else if (status.phase === 'lost' && (this.current.mode === 'joined' || this.current.mode === 'lost')) {
      const seconds = Math.max(1, Math.round((now - this.lastContactAt) / 1000));
      const training = this.wasTraining ? 'training on this machine was stopped' : 'nothing was training here';
      const message = `Lost the coordinator at ${url} for ${seconds} s; ${training}; retrying`;
      if (message === this.current.message) return;
      const first = this.current.mode === 'joined';
      this.set({ mode: 'lost', url, workerId: this.current.workerId, node, message });
      if (first) this.opts.onAlert?.({ title: 'Lost the other coordinator', body: this.current.message, severity: 'warning' });
    }
  }

  /** The agent ended by itself: the other coordinator drained this machine. */
  private onAgentExit(agent: WorkerAgent, exit: AgentExit): void {
    if (agent !== this.agent || this.leaving || this.stopped) return;
    // A join that failed ends the agent too; runJoin reports that one.
    if (this.current.mode !== 'joined' && this.current.mode !== 'lost') return;
    const { url } = this.current;
    this.dropAgent(agent);
    this.attempt++;
    this.opts.localWorker?.start();
    const why = exit.reason === 'drained' ? `The coordinator at ${url} drained this machine (${this.hide(exit.detail)})` : `The worker for ${url} stopped (${this.hide(exit.detail)})`;
    this.set(this.ownState(`${why}; ${this.backHome()}`));
    this.opts.onAlert?.({ title: `Left ${url}`, body: this.current.message, severity: 'info' });
  }

  private async stopRemote(agent: WorkerAgent | null, reason: string): Promise<void> {
    if (!agent) return;
    this.poll?.cancel();
    this.poll = null;
    try {
      await agent.stop(reason);
    } catch (error) {
      this.opts.log?.(`the worker for ${this.current.url} did not stop cleanly: ${this.hide(messageOf(error))}`);
    }
    if (this.agent === agent) this.agent = null;
  }

  private dropAgent(agent: WorkerAgent): void {
    if (this.agent !== agent) return;
    this.agent = null;
    this.poll?.cancel();
    this.poll = null;
  }

  private describeJoinFailure(error: unknown, url: string): string {
    const raw = this.hide(messageOf(error));
    if (error instanceof JoinError) {
      switch (error.kind) {
        case 'unauthorized': {
          const status = /\((\d{3}):/.exec(raw)?.[1] ?? '401';
          return `Wrong token: the coordinator at ${url} refused it (${status}). Copy the token from the other machine's Workers view.`;
        }
        case 'unreachable':
          // Refused or silent (not a 5xx): the usual cause is a coordinator that listens on loopback only.
          return /Check the URL/.test(raw)
            ? `${sentence(capitalize(raw))} To accept workers from other machines it must listen on the network (\`gpu-share serve --coordinator-host 0.0.0.0\`).`
            : sentence(capitalize(raw));
        case 'refused':
          return `${sentence(capitalize(raw))} Give this machine another name in the Name field if that one is taken.`;
        case 'protocol':
          return sentence(capitalize(raw));
        case 'awaiting': {
          // Its key is not approved there yet: say which, and how the other machine's person approves it.
          const key = /SHA256:[A-Za-z0-9+/]{43}/.exec(raw)?.[0] ?? 'its key';
          const command = /"(gpu-share workers approve \S+ --key \S+)"/.exec(raw)?.[1];
          return `The coordinator at ${url} has not approved this machine yet: approve ${key} there (its Workers view's Approve${command ? `, or \`${command}\`` : ''}), then join again.`;
        }
      }
    }
    return `Could not join ${url}: ${sentence(raw)}`;
  }

  private backHome(): string {
    return this.opts.localWorker ? "this machine trains for this app's own cluster again." : 'this machine is not a worker of any cluster now.';
  }

  private ownState(message?: string): MembershipState {
    const fallback = this.opts.localWorker
      ? "This machine trains for this app's own cluster."
      : 'This machine is not a worker of any cluster (the app runs without a local worker).';
    return { mode: 'own-coordinator', url: null, workerId: null, node: null, message: message ?? fallback };
  }

  /** Blanks the join token out of text that may be shown or logged. */
  private hide(text: string): string {
    return this.token.length >= 4 ? text.split(this.token).join(HIDDEN) : text;
  }

  private set(next: MembershipState): void {
    this.current = { ...next, message: this.hide(next.message) };
    try {
      this.opts.onChange(this.current);
    } catch {
      // A listener that throws must not leave the membership half-changed.
    }
  }
}
