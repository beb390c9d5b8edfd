/**
 * One log line a minute for connections a port refused (issue 26, item 7): a stranger hammering the link probe
 * port wrote 80,469 lines (8 MB) in 10 s when every refusal was its own line. Refusals are counted, and once per
 * period — only if there were any — one line says how many, from how many addresses, with a few examples and why.
 * Memory is bounded whatever the flood: the addresses counted and the examples kept are capped.
 */

export interface RefusalSummaryOptions {
  log: (line: string) => void;
  /** What refused, as the line starts ("link probe server"). */
  label: string;
  /** How often a line may be written (default one minute). */
  everyMs?: number;
  /** Addresses named as examples (default 3). */
  examples?: number;
}

/** Distinct addresses counted per period at most; past it the count reads "at least". */
const MAX_ADDRESSES = 4096;

export class RefusalSummary {
  private count = 0;
  private readonly addresses = new Set<string>();
  private readonly examples = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly everyMs: number;

  constructor(private readonly opts: RefusalSummaryOptions) {
    this.everyMs = opts.everyMs ?? 60_000;
  }

  /** Counts one refused connection from `address`, and why. */
  note(address: string, why: string): void {
    this.count += 1;
    if (this.addresses.size < MAX_ADDRESSES) this.addresses.add(address);
    if (this.examples.size < (this.opts.examples ?? 3) && !this.examples.has(address)) this.examples.set(address, why);
    this.timer ??= setTimeout(() => this.flush(), this.everyMs).unref();
  }

  /** Writes the line for what was counted since the last one (nothing when nothing was refused). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.count === 0) return;
    const period = this.everyMs === 60_000 ? 'minute' : `${Math.round(this.everyMs / 1000)} s`;
    const many = this.addresses.size >= MAX_ADDRESSES ? `at least ${MAX_ADDRESSES}` : String(this.addresses.size);
    const eg = [...this.examples].map(([address, why]) => `${address} (${why})`).join(', ');
    this.opts.log(
      `${this.opts.label}: refused ${this.count} connection${this.count === 1 ? '' : 's'} from ${many} address${this.addresses.size === 1 ? '' : 'es'} in the last ${period}, e.g. ${eg}`,
    );
    this.count = 0;
    this.addresses.clear();
    this.examples.clear();
  }
}
