/**
 * The variables that make a torchrun launch reachable from other machines: the address the coordinator
 * says others reach this worker at (the launcher shim makes torch publish it as MASTER_ADDR), and the
 * interface holding it for gloo, NCCL and TensorPipe, which otherwise bind to whatever the host name
 * resolves to (loopback on a LAN without DNS).
 */
import { findInterfaceFor, type InterfaceTable } from './local-interface';

/** Read by assets/launcher/torchrun_shim.py. */
export const LOCAL_ADDR_ENV = 'GPU_SHARE_LOCAL_ADDR';

/** Interface variables of gloo (CPU), NCCL (GPU) and TensorPipe (torch.distributed.rpc). */
export const SOCKET_IFNAME_VARS = ['GLOO_SOCKET_IFNAME', 'NCCL_SOCKET_IFNAME', 'TP_SOCKET_IFNAME'] as const;

export interface NetworkEnvInput {
  /** plan.localAddr: an IP literal, possibly in brackets. */
  localAddr: string;
  /** The environment the training process inherits: a variable the user set there is left alone. */
  inherited: NodeJS.ProcessEnv;
  /** The run's own env from the plan: a variable set there is left alone too. */
  planEnv: Record<string, string>;
  /** os.networkInterfaces() unless given (tests; a lookup done inside another network namespace). */
  interfaces?: InterfaceTable;
}

export interface NetworkEnv {
  env: Record<string, string>;
  /** Things worth a line in the worker's log (no address, no interface holding it). */
  notes: string[];
}

function stripBrackets(addr: string): string {
  const t = addr.trim();
  return t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
}

/** The value each variable takes for an interface: NCCL matches names by prefix unless told "=name". */
function ifnameValue(variable: (typeof SOCKET_IFNAME_VARS)[number], iface: string): string {
  return variable === 'NCCL_SOCKET_IFNAME' ? `=${iface}` : iface;
}

export function buildNetworkEnv(input: NetworkEnvInput): NetworkEnv {
  const addr = stripBrackets(input.localAddr);
  if (!addr) {
    return { env: {}, notes: ['the launch plan names no local address: torch will advertise this machine\'s host name, which other machines may not resolve'] };
  }
  const env: Record<string, string> = { [LOCAL_ADDR_ENV]: addr };
  let iface: string | null;
  try {
    iface = findInterfaceFor(addr, input.interfaces);
  } catch (error) {
    // os.networkInterfaces() can fail (libuv error in odd containers): launch anyway, without interface variables.
    return { env, notes: [`could not list this machine's network interfaces (${error instanceof Error ? error.message : String(error)})`] };
  }
  if (iface === null) {
    return {
      env,
      notes: [
        `no network interface on this machine holds ${addr}: gloo/NCCL pick their own interface ` +
          '(set GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME in the environment if training cannot connect)',
      ],
    };
  }
  for (const variable of SOCKET_IFNAME_VARS) {
    const userSet = input.planEnv[variable] ?? input.inherited[variable];
    if (userSet !== undefined && userSet !== '') continue;
    env[variable] = ifnameValue(variable, iface);
  }
  return { env, notes: [] };
}
