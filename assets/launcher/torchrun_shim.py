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

Rank order (GPU_SHARE_NODE_RANK = this member's position 0..n-1 in the coordinator's ring order, which puts
well-connected members next to each other): torch numbers the nodes of a rendezvous by sorting their
descriptors, _NodeDesc(fqdn, pid, local_id) (torch 1.13; 2.4+ names the first field `addr`), in
torch/distributed/elastic/rendezvous/dynamic_rendezvous.py, _mark_rendezvous_complete's
`enumerate(sorted(state.participants))`, so group ranks follow host names and pids, not links. The shim
carries the position in the descriptor's local_id ((position + 1) * 2**32 + torch's own counter: still
unique, and local_id is only an identity) and gives the descriptor class an order that compares that
position first, so the sort, and with it group rank and every rank's place in gloo's and NCCL's ring,
follows the coordinator's order. The host-name field is left alone: torch 2.4+ uses it as this node's
address (rank 0's MASTER_ADDR and the shared TCPStore's host), so changing it breaks the rendezvous there
(seen on torch 2.11). Descriptors without a position sort after those with one, in torch's own order; the
order is installed on every launch through the shim, since any member may be the one that sorts. A torch
without these classes gets a note on stderr instead of a failed launch.

Only the standard library and torch are used: this file runs with the user's own interpreter.
"""

import os
import sys

ADDR_ENV = "GPU_SHARE_LOCAL_ADDR"
NODE_RANK_ENV = "GPU_SHARE_NODE_RANK"
MAX_NODE_RANK = 99999  # five digits keep the prefixes' string order their numeric order
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


def read_node_rank(environ):
    """GPU_SHARE_NODE_RANK as a position, or (None, why) when unset or unusable."""
    raw = (environ.get(NODE_RANK_ENV) or "").strip()
    if raw == "":
        return None, None
    if raw.isdigit() and int(raw) <= MAX_NODE_RANK:
        return int(raw), None
    return None, (f"{NODE_RANK_ENV}={raw[:20]!r} is not a position from 0 to {MAX_NODE_RANK}: ignored, torch "
                  f"orders the nodes by host name")


POSITION_STRIDE = 1 << 32  # local_id = (position + 1) * POSITION_STRIDE + torch's counter


def _position_key(node):
    """Sort key of a rendezvous descriptor: its position first (unpositioned ones last), then torch's order."""
    local_id = node.local_id
    position = local_id // POSITION_STRIDE - 1 if local_id >= POSITION_STRIDE else MAX_NODE_RANK + 1
    return (position, getattr(node, "addr", None) or getattr(node, "fqdn", ""), node.pid, local_id)


def install_position_order(position):
    """Makes rendezvous descriptors sort by position (see the module doc) and, when `position` is not None,
    this node's descriptor carry it. Returns a note for stderr, or None when this torch lacks the classes."""
    try:
        import torch.distributed.elastic.rendezvous.dynamic_rendezvous as dyn
    except ImportError:
        return None
    generator = getattr(dyn, "_NodeDescGenerator", None)
    desc = getattr(dyn, "_NodeDesc", None)
    if generator is None or desc is None or not hasattr(desc, "__dataclass_fields__") \
            or "local_id" not in desc.__dataclass_fields__:
        return None
    import dataclasses

    desc.__lt__ = lambda a, b: _position_key(a) < _position_key(b)
    desc.__le__ = lambda a, b: _position_key(a) <= _position_key(b)
    desc.__gt__ = lambda a, b: _position_key(a) > _position_key(b)
    desc.__ge__ = lambda a, b: _position_key(a) >= _position_key(b)
    if position is None:
        return None
    # Wrap torch's own generate() once, even if main() runs twice in one process (a warm launcher).
    original = getattr(generator, "_gpu_share_original_generate", generator.generate)
    generator._gpu_share_original_generate = original

    def generate(self, *args, **kwargs):  # torch 2.4+ passes local_addr
        node = original(self, *args, **kwargs)
        return dataclasses.replace(node, local_id=(position + 1) * POSITION_STRIDE + node.local_id)

    generator.generate = generate
    return f"this node sorts at ring position {position} (dynamic_rendezvous._NodeDesc order)"


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
    position, problem = read_node_rank(os.environ)
    if problem:
        sys.stderr.write(f"{PREFIX} {problem}\n")
    note = install_position_order(position)
    if position is not None:
        sys.stderr.write(f"{PREFIX} {note or f'this torch has no rendezvous _NodeDesc to order: {NODE_RANK_ENV} ignored'}\n")
    sys.stderr.flush()
    torchrun.main(list(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
