/**
 * What the coordinator says to people: the event log (one sentence each: what happened and why) and
 * notifications (tray, toasts), both sent through the change feed. The wording helpers live here too, so
 * every message reads the same way.
 */
import type { CoordinatorEvent, CoordinatorEventKind, EventSeverity, UserNotification } from '../../../../src-shared/training';
import type { Clock } from '../../../platform/ports';
import type { ChangeFeed } from './change-feed';

export const MAX_EVENTS = 2000;

export type EventContext = { workerId?: number; runId?: string; generation?: number; jobId?: string; node?: string };

export class UserMessages {
  private readonly log: CoordinatorEvent[] = [];
  private eventSeq = 0;
  private notificationSeq = 0;
  private readonly eventSinks: ((event: CoordinatorEvent) => void)[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly feed: ChangeFeed,
    /** The node a worker id belongs to, so an event names its node even after the worker is forgotten. */
    private readonly nodeOf: (workerId: number) => string | undefined = () => undefined,
  ) {}

  /** Called with every new event (the state database keeps them). */
  onEvent(sink: (event: CoordinatorEvent) => void): void {
    this.eventSinks.push(sink);
  }

  /** Events kept from before a restart; numbering goes on after them. */
  restore(events: CoordinatorEvent[], lastSeq: number): void {
    this.log.splice(0, this.log.length, ...events.slice(-MAX_EVENTS));
    this.eventSeq = Math.max(lastSeq, this.log.at(-1)?.seq ?? 0);
  }

  event(kind: CoordinatorEventKind, severity: EventSeverity, message: string, ctx: EventContext = {}): void {
    const node = ctx.node ?? (ctx.workerId === undefined ? undefined : this.nodeOf(ctx.workerId));
    const event: CoordinatorEvent = { seq: ++this.eventSeq, at: this.clock.now(), kind, severity, message, ...ctx, ...(node === undefined ? {} : { node }) };
    this.log.push(event);
    if (this.log.length > MAX_EVENTS) this.log.splice(0, this.log.length - MAX_EVENTS);
    for (const sink of this.eventSinks) sink(event);
    this.feed.broadcast({ type: 'event', event });
  }

  notify(title: string, body: string, severity: EventSeverity, target: UserNotification['target']): void {
    const notification: UserNotification = { id: `n${++this.notificationSeq}`, title, body, severity };
    if (target) notification.target = target;
    this.feed.broadcast({ type: 'notification', notification });
  }

  events(): CoordinatorEvent[] {
    return this.log.map((e) => ({ ...e }));
  }
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function describeExitStatus(exitCode: number | null, signal: number | null): string {
  return signal !== null ? `exited with signal ${signal}` : `exited with code ${exitCode ?? 'unknown'}`;
}

export function describeExit(node: string, exitCode: number | null, signal: number | null): string {
  return `process on ${node} ${describeExitStatus(exitCode, signal)}`;
}
