/** Runs `gpu-share …` in-process with captured output, the way a person's terminal would show it. */
import { runCli } from '../../../src-main/cli/run-cli';

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function cli(args: string[], env: NodeJS.ProcessEnv = {}, cwd = '/'): Promise<Captured> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t), env, cwd });
  return { code, out, err };
}
