#!/usr/bin/env python3
"""GPU Share's wrapper around torch's elastic launcher (torch.distributed.run).

Usage: python torchrun_shim.py <torchrun arguments...>   with GPU_SHARE_LOCAL_ADDR=<address> in the environment.

Why it exists: torch's launcher tells every rank to reach rank 0 at the rank-0 machine's host name
(MASTER_ADDR = socket.getfqdn()). On a home LAN without DNS that name resolves to nothing, or to 127.0.1.1,
so ranks on other machines can never form the group. The coordinator knows the address the other members
reach this machine at and hands it over as GPU_SHARE_LOCAL_ADDR; this shim makes torch publish that address
instead of the host name, then runs torch's own launcher unchanged. Every other argument goes through
untouched (the --redirects/--tee workaround for torch 1.13 on Python 3.11 included).

Where torch takes the host name (checked against the torch sources):
- torch 1.13 to 2.3: torch/distributed/elastic/agent/server/api.py, SimpleElasticAgent._set_master_addr_port
  calls the module function _get_fq_hostname() when no master_addr is given.
- torch 2.4+: torch/distributed/elastic/rendezvous/api.py, RendezvousStoreInfo.build calls socket.getfqdn()
  (2.5+: `local_addr or socket.getfqdn()`), and dynamic_rendezvous.py names this node `socket.getfqdn()`.
- torch 2.1+ also has the launcher flag --local_addr, which the shim passes when the user did not.

Only the standard library and torch are used: this file runs with the user's own interpreter.
"""

import os
import sys

ADDR_ENV = "GPU_SHARE_LOCAL_ADDR"
PREFIX = "gpu-share launcher:"

# Modules that call socket.getfqdn() for this node's own address (torch 2.4+); absent ones are skipped.
_FQDN_MODULES = (
    "torch.distributed.elastic.rendezvous.api",
    "torch.distributed.elastic.rendezvous.dynamic_rendezvous",
)


class _AddressedSocket:
    """Stands in for the `socket` module inside one torch module: this machine's own fully qualified name
    becomes the advertised address; every other name and function is the real socket module's."""

    def __init__(self, real, addr):
        self._real = real
        self._addr = addr

    def getfqdn(self, name=""):
        if name in ("", self._real.gethostname()):
            return self._addr
        return self._real.getfqdn(name)

    def __getattr__(self, name):
        return getattr(self._real, name)


def strip_brackets(addr):
    """Takes the brackets off an IPv6 literal ("[fe80::1]" -> "fe80::1"): torch's stores want it bare."""
    addr = addr.strip()
    if addr.startswith("[") and addr.endswith("]"):
        return addr[1:-1]
    return addr


def has_local_addr_flag(parser):
    """Whether this torch's launcher accepts --local_addr (torch 2.1+); argparse keeps its flags there."""
    actions = getattr(parser, "_option_string_actions", {})
    return "--local_addr" in actions or "--local-addr" in actions


def user_gave_local_addr(parser, argv):
    """Whether the launcher's own arguments already name an address. Parsed with torch's parser, so a
    --local_addr among the training script's arguments does not count, and torch 2.x's PET_LOCAL_ADDR
    (the flag's environment default) does."""
    return getattr(parser.parse_args(list(argv)), "local_addr", None) is not None


def publish_address(addr, argv, torchrun):
    """Makes torch advertise `addr` for this node; returns the argv to hand to torch's launcher."""
    import socket

    import torch.distributed.elastic.agent.server.api as agent_api

    patched = []
    if hasattr(agent_api, "_get_fq_hostname"):
        agent_api._get_fq_hostname = lambda: addr
        patched.append("agent_api._get_fq_hostname")
    for name in _FQDN_MODULES:
        try:
            module = __import__(name, fromlist=["_"])
        except ImportError:
            continue
        if getattr(module, "socket", None) is socket:
            module.socket = _AddressedSocket(socket, addr)
            patched.append(name.rsplit(".", 1)[-1] + ".socket.getfqdn")

    parser = torchrun.get_args_parser()
    if has_local_addr_flag(parser) and not user_gave_local_addr(parser, argv):
        # The script and its arguments come last, so a flag in front is always the launcher's.
        argv = [f"--local_addr={addr}"] + list(argv)
        patched.append("--local_addr")
    return argv, patched


def main(argv):
    addr = strip_brackets(os.environ.get(ADDR_ENV, ""))
    import torch
    import torch.distributed.run as torchrun

    if addr:
        argv, patched = publish_address(addr, argv, torchrun)
        sys.stderr.write(f"{PREFIX} torch {torch.__version__}: this node advertises {addr} "
                         f"(MASTER_ADDR when it holds rank 0; via {', '.join(patched) or 'nothing'})\n")
    else:
        sys.stderr.write(f"{PREFIX} {ADDR_ENV} is not set: torch advertises this machine's host name\n")
    sys.stderr.flush()
    torchrun.main(list(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
