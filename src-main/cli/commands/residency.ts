/** `gpu-share residency --pid N`: is this process (or a process it started) really holding GPU memory? */
import { locateNvidiaSmi, POLL_WINDOW_SECONDS, probeResidency } from '../../platform/hardware/index';
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../command';

export const residencyCommand: Command = {
  name: 'residency',
  summary: 'check that a training process holds GPU memory (nvidia-smi)',
  usage: `Usage: gpu-share residency --pid N [--json]

Asks nvidia-smi (--query-compute-apps=pid,used_memory) for up to ${POLL_WINDOW_SECONDS} s whether process N, or any
process it started (a torchrun launcher's workers), holds at least 1 MiB of GPU memory.

Exit status: 0 GPU resident, 1 not on the GPU (or nvidia-smi missing / unreadable), 2 bad usage.

Options:
  --pid N   the training process (or its launcher)
  --json    print {status, detail, pid, usedMib} as JSON
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { pid: { type: 'string' }, json: { type: 'boolean' } });
    noMorePositionals(positionals);
    if (values.pid === undefined) throw new UsageError('--pid is required');
    const pid = intOption(values.pid, 'pid', 0, 1, 4_294_967_295);
    const result = await probeResidency({ pid, nvidiaSmiPath: locateNvidiaSmi(io.env), env: io.env });
    io.out(values.json ? `${JSON.stringify(result, null, 2)}\n` : `${result.detail}\n`);
    return result.status === 'pass' ? 0 : 1;
  },
};
