"""``python -m mars.deploy.kubernetes.probe``: a worker pod's readiness command.

Exit 0 once a supervisor lists this worker alive; 1, with one line saying
why, while none does (not started, not registered yet, or no supervisor
answers). It reads the worker's own environment (the table in
:mod:`mars.deploy.kubernetes`): the address the worker advertises
(``MARS_CONTAINER_IP:MARS_BIND_PORT``), its supervisors and its token. A
port that merely listens is what the liveness probe (``tcpSocket``) checks;
ready means the worker can be given work.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence

from ... import oscar as mo
from ...services.cluster.api import ClusterAPI
from ..oscar.cmdline import parse_args
from ..oscar.tokens import joining_token, tls_config
from . import PodEnvError, env_argv

#: seconds one supervisor has to answer
CALL_TIMEOUT = 5.0


async def _listed_alive(address: str, supervisors: list[str]) -> str | None:
    """None when a supervisor lists ``address`` alive, else why not."""
    why = []
    for supervisor in supervisors:
        try:
            workers = await asyncio.wait_for(ClusterAPI(supervisor).get_workers(), CALL_TIMEOUT)
        except Exception as e:  # noqa: BLE001 - any failure means not ready, and says so
            why.append(f"supervisor {supervisor} did not answer ({type(e).__name__}: {e})")
            continue
        if any(w.address == address and w.state == "alive" for w in workers):
            return None
        why.append(f"supervisor {supervisor} does not list {address} alive")
    return "; ".join(why)


async def check(environ: Mapping[str, str], argv: Sequence[str] = ()) -> str | None:
    """None when the worker the environment describes is registered and alive, else the reason it is not."""
    cfg = parse_args("worker", env_argv("worker", environ) + list(argv))
    worker = cfg["worker"]
    if not worker["port"]:
        return "the worker's port is not known (MARS_BIND_PORT or -p)"
    address = f"{worker['advertise_address'] or worker['host']}:{worker['port']}"
    token = await joining_token(cfg, worker["supervisors"], "the readiness probe")
    mo.set_token(token)
    tls = tls_config(cfg)
    if tls is not None:
        mo.set_tls(tls)
    try:
        return await _listed_alive(address, worker["supervisors"])
    finally:
        mo.close_connections()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probe; 0 when ready, 1 when not, 2 for an environment that cannot describe a worker."""
    try:
        why = asyncio.run(check(os.environ, sys.argv[1:] if argv is None else argv))
    except (PodEnvError, ValueError) as e:
        print(f"not ready: {e}", file=sys.stderr)
        return 2
    if why is not None:
        print(f"not ready: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
