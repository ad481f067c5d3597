"""A one-node SLURM cluster on this machine, for tests and trials of ``clad run --slurm``.

:class:`LocalSlurm` writes a minimal ``slurm.conf`` into a temporary folder (the node's CPUs and
memory from ``slurmd -C``, one default partition, ``proctrack/linuxproc``, ``task/none``,
``select/cons_tres`` with memory as a consumable and jobs over their memory killed), starts
``munged``, ``slurmctld`` and ``slurmd`` as root, waits until the node is idle and stops them by
their process ids (then removes the temporary folder). While it runs, ``SLURM_CONF`` points at its configuration, so ``sbatch``,
``squeue`` and ``scancel`` (and ``clad run --slurm``) talk to it. It needs root and Debian's
``slurm-wlm`` and ``munge`` packages; :func:`unavailable` says why it cannot start, or None.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["LocalSlurm", "unavailable"]

_TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "srun")


def unavailable() -> str | None:
    """Why a one-node cluster cannot start here (None: it can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "starting slurmctld, slurmd and munged needs root"
    missing = [t for t in _TOOLS if shutil.which(t) is None]
    if missing:
        return (
            f"{', '.join(missing)} not found: install Debian's slurm-wlm and munge packages "
            "(apt-get install slurm-wlm munge)"
        )
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """A one-node SLURM cluster (see the module docstring): ``with LocalSlurm() as cluster:``;
    ``cluster.env`` holds ``SLURM_CONF`` (also set in ``os.environ`` while it runs)."""

    def __init__(self, folder: str | os.PathLike | None = None, mem_per_cpu_mb: int = 2048):
        self.folder = Path(folder) if folder else None
        self.mem_per_cpu_mb = int(mem_per_cpu_mb)
        self.pids: dict[str, int] = {}
        self._old_conf: str | None = None
        self._own_folder = folder is None

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def _config(self) -> str:
        node = subprocess.run(
            ["slurmd", "-C"], capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
        fields = dict(kv.split("=", 1) for kv in node.split() if "=" in kv)
        host = socket.gethostname().split(".")[0]
        cpus = int(fields.get("CPUs", os.cpu_count() or 1))
        f = self.folder
        node_line = " ".join(
            [f"NodeName={host}", "NodeAddr=127.0.0.1"]
            + [f"{k}={v}" for k, v in fields.items() if k not in ("NodeName", "UpTime")]
            + ["State=UNKNOWN"]
        )
        return "\n".join(
            [
                "ClusterName=clad",
                f"SlurmctldHost={host}(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={f / 'munge.sock'}",
                f"StateSaveLocation={f / 'state'}",
                f"SlurmdSpoolDir={f / 'spool'}",
                f"SlurmctldPidFile={f / 'slurmctld.pid'}",
                f"SlurmdPidFile={f / 'slurmd.pid'}",
                f"SlurmctldLogFile={f / 'slurmctld.log'}",
                f"SlurmdLogFile={f / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core_Memory",
                f"DefMemPerCPU={min(self.mem_per_cpu_mb, int(fields.get('RealMemory', 2048)) // max(1, cpus))}",
                "JobAcctGatherType=jobacct_gather/linux",
                "JobAcctGatherFrequency=task=1",
                "JobAcctGatherParams=OverMemoryKill",
                "MpiDefault=none",
                "ReturnToService=2",
                "MinJobAge=600",
                "KillWait=5",
                "SchedulerType=sched/backfill",
                "SchedulerParameters=sched_interval=1",
                "InactiveLimit=0",
                "SlurmdTimeout=60",
                node_line,
                f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )

    def start(self) -> "LocalSlurm":
        """Start the daemons and wait until the node is idle; a RuntimeError saying why otherwise."""
        why = unavailable()
        if why:
            raise RuntimeError(why)
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="clad-slurm-", dir="/tmp"))
        f = self.folder
        for sub in ("state", "spool"):
            (f / sub).mkdir(parents=True, exist_ok=True)
        key = f / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.conf.write_text(self._config())
        self._old_conf = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = str(self.conf)
        try:
            self._run(
                [
                    "munged",
                    "--force",
                    f"--socket={f / 'munge.sock'}",
                    f"--key-file={key}",
                    f"--pid-file={f / 'munged.pid'}",
                    f"--log-file={f / 'munged.log'}",
                    f"--seed-file={f / 'munged.seed'}",
                ],
                "munged",
            )
            self._run(["slurmctld", "-c", "-f", str(self.conf)], "slurmctld")
            self._run(["slurmd", "-f", str(self.conf)], "slurmd")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                state = subprocess.run(
                    ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True
                ).stdout.strip()
                if state in ("idle", "mix", "alloc"):
                    return self
                time.sleep(0.5)
            raise RuntimeError(
                f"the node did not become idle within 60 s (sinfo: {state!r}); logs in {f}"
            )
        except BaseException:
            self.stop()
            raise

    def _run(self, cmd: list[str], name: str) -> None:
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{name} did not start: {(res.stderr or res.stdout).strip()[:500]}")
        pid_file = self.folder / f"{name}.pid"
        for _ in range(50):
            try:
                self.pids[name] = int(pid_file.read_text().strip())
                return
            except (OSError, ValueError):
                time.sleep(0.1)
        raise RuntimeError(f"{name} wrote no pid file {pid_file}")

    def stop(self) -> None:
        """Cancel this cluster's jobs, stop its daemons by pid (SIGTERM, then SIGKILL)."""
        if "slurmctld" in self.pids:
            subprocess.run(["scancel", "--user", "root"], capture_output=True)
            time.sleep(1)
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.pop(name, None)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self._old_conf is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = self._old_conf
        if self._own_folder and self.folder is not None:
            for _ in range(10):  # a daemon may still write its last lines as it goes
                shutil.rmtree(self.folder, ignore_errors=True)
                if not self.folder.exists():
                    break
                time.sleep(0.3)

    def __enter__(self) -> "LocalSlurm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
