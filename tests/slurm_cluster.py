"""A throw-away single-node SLURM cluster (munged, slurmctld, slurmd) on loopback.

Everything lives under one folder: the munge key and socket, ``slurm.conf``, ``gres.conf``,
state, spool and logs. Clients find the cluster through ``SLURM_CONF`` in
:attr:`SlurmCluster.env`. Needs root (the daemons run as root: ``SlurmUser=root``) and
Debian's ``slurmctld``, ``slurmd``, ``slurm-client`` and ``munge`` packages.

The node offers twice the machine's CPUs, two partitions (``cpu``, the default, and ``gpu``)
and as many ``gpu`` generic resources as CPUs, so that GPU requests can be scheduled side by
side as the local run does: a node with only the machine's CPUs and one GPU ran one GPU rule
at a time and, with jobs waiting for the next status check, left the cores idle half of the
run. The GPUs are device nodes in the cluster's folder with ``/dev/null``'s numbers: Slurm
drops GPUs declared without a ``File=``, and no job opens them (torch sees no CUDA device and
stays on the CPU).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: Programs the cluster needs, from Debian's slurmctld, slurmd, slurm-client and munge.
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol", "sinfo")

#: Partitions of the test cluster; config/profiles/slurm uses the same names.
PARTITIONS = ("cpu", "gpu")

# Finished jobs must stay visible to `squeue` (the profile's status command) and to
# `scontrol show job` (the tests' evidence) for the whole run.
MIN_JOB_AGE_SECONDS = 7200


def unavailable_reason() -> str | None:
    """Why a cluster cannot be started here, or None when it can."""
    if os.geteuid() != 0:
        return "starting SLURM daemons needs root"
    missing = [name for name in PROGRAMS if shutil.which(name, path=_sbin_path()) is None]
    if missing:
        return ("SLURM/munge programs not found: " + ", ".join(missing)
                + " (apt-get install slurmctld slurmd slurm-client munge)")
    return None


def _sbin_path() -> str:
    """PATH with the system sbin folders, where Debian installs the daemons."""
    return os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def _program(name: str) -> str:
    found = shutil.which(name, path=_sbin_path())
    if found is None:
        raise FileNotFoundError(f"{name} not found (apt-get install slurmctld slurmd "
                                "slurm-client munge)")
    return found


def _free_ports(count: int) -> list[int]:
    """Ports nobody listens on right now (bound together so that they differ)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


#: Memory the node declares at least. Nothing enforces it (no cgroups) and the scheduler does
#: not count it (CR_Core), but a job asking for more than a node has is refused: the test
#: node must take the largest request of any config's rule, whatever the machine has.
MIN_NODE_MEMORY_MB = 64 * 1024


#: CPUs the node declares per core of the machine (see the module's docstring).
CPUS_PER_CORE = 2


def _fake_gpus(folder: Path, count: int) -> str:
    """Make ``count`` device nodes ``folder/gpu<i>`` (``/dev/null``'s numbers) and return the
    ``gres.conf`` lines that declare them as GPUs."""
    null = os.stat("/dev/null").st_rdev
    lines = []
    for index in range(count):
        device = folder / f"gpu{index}"
        if not device.exists():
            os.mknod(device, 0o666 | stat.S_IFCHR, null)
        lines.append(f"Name=gpu File={device}\n")
    return "".join(lines)


def _node_memory_mb() -> int:
    """Memory the node declares: what the machine has, at least MIN_NODE_MEMORY_MB."""
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(MIN_NODE_MEMORY_MB, pages // 2**20)


def slurm_conf(folder: Path, ctld_port: int, slurmd_port: int, cpus: int,
               memory_mb: int) -> str:
    """The text of ``slurm.conf`` for a one-node cluster whose files live in ``folder``."""
    return f"""\
ClusterName=phenomt-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/munge.socket
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
# No cgroups: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
# No accounting daemon: job records live in slurmctld for MinJobAge seconds.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge={MIN_JOB_AGE_SECONDS}
MpiDefault=none
ReturnToService=2
# Listen on loopback only.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
# The node's declared memory (and CPUs) stand even where the machine has less.
SlurmdParameters=config_overrides
NodeName=localhost CPUs={cpus} RealMemory={memory_mb} Gres=gpu:{cpus} State=UNKNOWN
PartitionName={PARTITIONS[0]} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName={PARTITIONS[1]} Nodes=localhost MaxTime=INFINITE State=UP
"""


@dataclass
class SlurmCluster:
    """A running test cluster; :meth:`stop` ends its daemons."""

    folder: Path
    env: dict[str, str]
    #: CPUs of the node
    cpus: int
    pid_files: list[Path] = field(default_factory=list)

    def run(self, *args: str, timeout: int = 30) -> str:
        """Run a SLURM client command against this cluster and return its output."""
        result = subprocess.run([_program(args[0]), *args[1:]], env=self.env, text=True,
                                capture_output=True, timeout=timeout, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}): "
                               f"{result.stderr.strip()}")
        return result.stdout

    def jobs(self) -> list[dict[str, str]]:
        """Every job slurmctld still knows (finished ones for MinJobAge), as
        ``scontrol show job`` fields."""
        text = self.run("scontrol", "show", "job", "--oneliner")
        return [parse_scontrol_record(line) for line in text.splitlines() if line.strip()]

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the daemons' logs, for error messages."""
        parts = []
        for name in ("munge/munged.log", "slurmctld.log", "slurmd.log"):
            path = self.folder / name
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path}\n" + "\n".join(tail))
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel what is left and stop the daemons (slurmd, slurmctld, munged)."""
        # The cluster may be half up: teardown goes on when scancel fails.
        with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
            self.run("scancel", "--full", "--user", "root", timeout=10)
        for pid_file in reversed(self.pid_files):
            _terminate(pid_file)


def parse_scontrol_record(line: str) -> dict[str, str]:
    """``JobId=5 JobName=x Partition=gpu ...`` (one ``--oneliner`` record) → a dict.

    Values never contain spaces except in a few free-text fields (``Command``,
    ``Comment``...), which this keeps joined to the preceding key.
    """
    record: dict[str, str] = {}
    key = None
    for token in line.split():
        name, sep, value = token.partition("=")
        if sep and name and " " not in name and (name[0].isupper() or "/" in name):
            key = name
            record[key] = value
        elif key is not None:
            record[key] += " " + token
    return record


def _terminate(pid_file: Path, timeout: float = 10) -> None:
    """SIGTERM the daemon whose pid is in ``pid_file`` and wait until it is gone."""
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, which nobody may reap here, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _wait_for(condition: Callable[[], bool], what: str, cluster: SlurmCluster,
              timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise RuntimeError(f"SLURM test cluster: {what} within {timeout:.0f} s\n"
                       + cluster.log_tail())


def _srun_wrapper(folder: Path, conf: Path) -> Path:
    """A folder holding an ``srun`` that finds this cluster's ``slurm.conf``, for PATH.

    snakemake-executor-plugin-slurm-jobstep (0.6.1) removes every ``SLURM_*`` variable, so
    ``SLURM_CONF`` too, before it starts a job with ``srun``; a cluster whose configuration
    is not in /etc/slurm then has no configuration for that srun.
    """
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "srun"
    wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {_program("srun")} "$@"\n')
    wrapper.chmod(0o755)
    return bin_dir


def start_cluster(folder: Path) -> SlurmCluster:
    """Start munged, slurmctld and slurmd with all their files in ``folder`` and wait until
    the node takes jobs. Call :meth:`SlurmCluster.stop` when done (also after an error)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("state", "spool", "munge"):
        (folder / name).mkdir(exist_ok=True)
    # munged checks that only root can write the folders on the way to its key and socket.
    os.chmod(folder, 0o755)
    os.chmod(folder / "munge", 0o755)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    ctld_port, slurmd_port = _free_ports(2)
    cpus = CPUS_PER_CORE * (os.cpu_count() or 1)
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, ctld_port, slurmd_port, cpus, _node_memory_mb()))
    # gres.conf is read from slurm.conf's folder.
    (folder / "gres.conf").write_text(_fake_gpus(folder, cpus))
    env = dict(os.environ, SLURM_CONF=str(conf),
               PATH=f"{_srun_wrapper(folder, conf)}{os.pathsep}{os.environ.get('PATH', '')}")
    cluster = SlurmCluster(folder, env, cpus)
    munge = folder / "munge"
    daemons = [
        ([_program("munged"), "--force", f"--socket={munge}/munge.socket",
          f"--key-file={key}", f"--pid-file={munge}/munged.pid",
          f"--log-file={munge}/munged.log", f"--seed-file={munge}/munged.seed"],
         munge / "munged.pid"),
        ([_program("slurmctld"), "-f", str(conf), "-c"], folder / "slurmctld.pid"),
        ([_program("slurmd"), "-f", str(conf), "-N", "localhost"], folder / "slurmd.pid"),
    ]
    try:
        for command, pid_file in daemons:
            # Each daemon forks into the background and writes its pid file.
            result = subprocess.run(command, env=env, capture_output=True, text=True,
                                    timeout=30, check=False)
            if result.returncode != 0:
                raise RuntimeError(f"{command[0]} failed to start ({result.returncode}): "
                                   f"{result.stderr.strip()}\n" + cluster.log_tail())
            cluster.pid_files.append(pid_file)
            _wait_for(pid_file.exists, f"{Path(command[0]).name} wrote no pid file", cluster)
        _wait_for(lambda: _node_idle(cluster), "the node did not become idle", cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _node_idle(cluster: SlurmCluster) -> bool:
    try:
        states = cluster.run("sinfo", "--noheader", "--Node", "--format=%T", timeout=10)
    except (RuntimeError, subprocess.TimeoutExpired):
        return False
    return bool(states.split()) and all(state == "idle" for state in states.split())
