"""Report training steps to the node's houston agent.

One Unix datagram per step, the same bytes as the C client (include/houston/step.h); the
contract is docs/steps.md. Standard library only, Python 3.9 or newer.

    import houston_step

    reporter = houston_step.open()          # identity from SLURM_* / torchrun variables
    for step in range(start, steps):
        t0 = time.perf_counter()
        train_one_step()
        reporter.report(step + 1, time.perf_counter() - t0, tokens=tokens_per_step)

When the job stops stepping on purpose (a checkpoint save, an evaluation), say so first, so that
a slow save is not taken for a hang; the next report ends the pause:

        if (step + 1) % save_interval == 0:
            reporter.pause(step + 1, "checkpoint")   # after the report of step + 1
            save_checkpoint(step + 1)

report() and pause() never raise and never block: when no agent listens, its queue is full
or anything else goes wrong, the report is dropped and counted (Reporter.dropped). It sends a
datagram with MSG_DONTWAIT on a non-blocking socket; a report costs a few microseconds.

Identity (the same rules as the C library):
    job         SLURM_JOB_ID, else HOUSTON_JOB_ID     (required: without it every report drops)
    rank        RANK, else SLURM_PROCID               (left out when unknown)
    local rank  LOCAL_RANK, else SLURM_LOCALID
    world size  WORLD_SIZE, else SLURM_NTASKS
    socket      HOUSTON_STEP_SOCKET, else /run/houston/step.sock
An empty variable counts as unset; a rank, local rank or world size that is not plain decimal
digits (at most 10**8, COUNT_MAX: the agent refuses more) is skipped. In a job id, every byte
that is not printable ASCII (0x21..0x7e), and every '=', becomes '_'; ids longer than 63 bytes
are cut there. A job id given as an int is its decimal digits.

Threads: report() may be called from several threads at once; set_identity(), set_socket(),
set_gpu() and close() should not race with it. A process forked from one that reports (the
"fork" start method of multiprocessing) may report too, through the reporters it inherited:
their locks are made anew in the child, whatever the parent's other threads held.
"""

import operator
import os
import socket
import threading
import weakref

__all__ = ["Reporter", "open", "report", "pause", "PAUSE_KINDS", "SOCKET_DEFAULT", "DGRAM_MAX",
           "JOB_MAX", "COUNT_MAX"]

SOCKET_DEFAULT = "/run/houston/step.sock"
DGRAM_MAX = 512
JOB_MAX = 63
PAUSE_KINDS = ("checkpoint", "eval", "other")  # pause(kind=...): the words on the wire
COUNT_MAX = 10**8  # HN_STEP_COUNT_MAX: the largest rank, world size and GPU index sent
_INT_MAX = COUNT_MAX
_DIGITS = frozenset(b"0123456789")

# Optional reals in wire order: (keyword argument, key).
_PHASES = (("forward_s", "fwd"), ("backward_s", "bwd"), ("optimizer_s", "opt"), ("comm_s", "comm"))


def _getenv(name):
    """The variable as bytes, or None when unset or empty."""
    environb = getattr(os, "environb", None)
    if environb is not None:
        value = environb.get(name.encode("ascii"))
    else:  # pragma: no cover - platforms without bytes environ (Windows)
        text = os.environ.get(name)
        value = text.encode("utf-8", "surrogateescape") if text is not None else None
    return value or None


def _count(value):
    """A rank, local rank or world size: ASCII digits only, at most INT_MAX; else -1. Leading
    zeros count for nothing, as in the C library (and int() never sees more than 10 digits)."""
    if not value or any(b not in _DIGITS for b in value):
        return -1
    digits = value.lstrip(b"0")
    if len(digits) > len(str(_INT_MAX)):
        return -1
    n = int(digits) if digits else 0
    return n if n <= _INT_MAX else -1


def _env_count(first, second):
    n = _count(_getenv(first))
    return n if n >= 0 else _count(_getenv(second))


def _sanitise_job(job):
    """Bytes of the job id with every byte outside 0x21..0x7e and every '=' made '_', cut at
    JOB_MAX bytes (as the C library does). An int (int(os.environ["SLURM_JOB_ID"]), say) is
    its decimal digits; None for anything else that is not text or bytes."""
    if isinstance(job, str):
        job = job.encode("utf-8", "surrogateescape")
    elif isinstance(job, int) and not isinstance(job, bool):
        job = b"%d" % job
    elif not isinstance(job, (bytes, bytearray, memoryview)):
        return None
    job = bytes(job)[:JOB_MAX]
    return bytes(b if 0x20 < b < 0x7F and b != 0x3D else 0x5F for b in job).decode("ascii")


def _wrong(value, name):
    return TypeError("%s must be a number, not %s" % (name, type(value).__name__))


def _check_number(value, name):
    """Raises TypeError for a str, bytes or bool (numpy's bool_ too) given as a number: it is a
    wrong argument, never the number it spells or 1 or 0."""
    kind = type(value)
    numpy_bool = kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")
    if isinstance(value, (str, bytes, bytearray, bool)) or numpy_bool:
        raise _wrong(value, name)


def _real(value, name):
    """'%.9g' text of a finite value >= 0; None for None, a negative, NaN or infinite value.
    Raises TypeError for anything that is not a number (_check_number). Python's % formatting
    ignores the locale, as the C library does on purpose."""
    if value is None:
        return None
    _check_number(value, name)
    try:
        v = float(value)
    except OverflowError:  # an int beyond a double: not a usable value
        return None
    except (TypeError, ValueError):
        raise _wrong(value, name) from None
    if v != v or v < 0 or v == float("inf"):
        return None
    if v == 0:
        v = 0.0  # -0.0 prints as "-0"
    return "%.9g" % v


def _integer(value, limit, name):
    """A non-negative integer below limit (ints, numpy integers, integral floats); None for None
    and any other number. Raises TypeError for anything that is not a number (_check_number)."""
    if value is None:
        return None
    _check_number(value, name)
    try:
        n = operator.index(value)
    except TypeError:
        try:
            v = float(value)
        except OverflowError:  # beyond a double (a huge Fraction): not a usable value
            return None
        except (TypeError, ValueError):
            raise _wrong(value, name) from None
        if v != v or v in (float("inf"), float("-inf")) or v != int(v):
            return None
        n = int(v)
    return n if 0 <= n < limit else None


def _setting(value, limit, name):
    """_integer() for the setters, which never raise: a wrong argument counts as None."""
    try:
        return _integer(value, limit, name)
    except TypeError:
        return None


class Reporter:
    """A step-report client. Identity comes from the environment; see the module doc."""

    def __init__(self):
        job = _getenv("SLURM_JOB_ID") or _getenv("HOUSTON_JOB_ID") or b""
        self._job = _sanitise_job(job)
        self._rank = _env_count("RANK", "SLURM_PROCID")
        self._local_rank = _env_count("LOCAL_RANK", "SLURM_LOCALID")
        self._world = _env_count("WORLD_SIZE", "SLURM_NTASKS")
        self._gpu = -1
        self._path = _getenv("HOUSTON_STEP_SOCKET") or SOCKET_DEFAULT.encode("ascii")
        self._sock = None
        self._lock = threading.Lock()
        _reporters.add(self)  # its lock is made anew in a forked child (_after_fork)
        self._dropped = 0
        self.last_error = None  # the exception of the most recent drop, for a diagnosis

    # ---- configuration (before sharing the reporter between threads) ----

    def set_identity(self, job=None, rank=-1, local_rank=-1, world=-1):
        """Overrides the environment; None / negative (or not a number: a str, a bool) keeps the
        current value, and so does a job that is not a str, bytes or int."""
        job = _sanitise_job(job) if job is not None else None
        if job is not None:
            self._job = job
        for attr, value in (("_rank", rank), ("_local_rank", local_rank), ("_world", world)):
            n = _setting(value, _INT_MAX + 1, attr[1:])
            if n is not None:
                setattr(self, attr, n)

    def set_socket(self, path):
        """Sends to path (str, bytes or os.PathLike) from now on; None, or a path of another
        type (an int), keeps the current one."""
        if isinstance(path, (str, bytes, os.PathLike)):
            self._path = os.fsencode(path)

    def set_gpu(self, gpu):
        """The node-local GPU index (as nvidia-smi numbers it) sent as gpu=; negative, None or
        not a number (a str, a bool): not sent (the default)."""
        n = _setting(gpu, _INT_MAX + 1, "gpu")
        self._gpu = n if n is not None else -1

    @property
    def identity(self):
        """(job, rank, local_rank, world) as reports carry them; -1 for unknown."""
        return (self._job, self._rank, self._local_rank, self._world)

    @property
    def dropped(self):
        """Reports dropped so far."""
        return self._dropped

    # ---- reporting ----

    def format(self, step, seconds, tokens=None, forward_s=None, backward_s=None,
               optimizer_s=None, comm_s=None, checkpoint=None, tflops=None,
               flops_per_token=None):
        """The datagram for one step as bytes, or None when it cannot be sent (no job id, no
        valid step or duration). Optional values that are None, negative, NaN or infinite are
        left out. Raises TypeError for a wrong argument: a str, bytes or bool where a number
        goes (report() drops it, with the error in last_error)."""
        step = _integer(step, 2**64, "step")
        dur = _real(seconds, "seconds")
        if not self._job or step is None or dur is None:
            return None
        parts = self._identity_parts()
        parts.append("step=%d" % step)
        parts.append("dur=" + dur)
        tokens = _integer(tokens, 2**63, "tokens")
        if tokens is not None:
            parts.append("tokens=%d" % tokens)
        phases = {"forward_s": forward_s, "backward_s": backward_s,
                  "optimizer_s": optimizer_s, "comm_s": comm_s}
        for name, key in _PHASES:
            text = _real(phases[name], name)
            if text is not None:
                parts.append(key + "=" + text)
        checkpoint = _integer(checkpoint, 2**63, "checkpoint")
        if checkpoint is not None:
            parts.append("ckpt=%d" % checkpoint)
        text = _real(tflops, "tflops")
        if text is not None:
            parts.append("tflops=" + text)
        text = _real(flops_per_token, "flops_per_token")
        if text is not None:
            parts.append("fpt=" + text)
        if self._gpu >= 0:
            parts.append("gpu=%d" % self._gpu)
        data = " ".join(parts).encode("ascii")
        return data if len(data) <= DGRAM_MAX else None

    def _identity_parts(self):
        parts = ["hs1", "job=" + self._job]
        for key, value in (("rank", self._rank), ("lrank", self._local_rank),
                           ("world", self._world)):
            if value >= 0:
                parts.append("%s=%d" % (key, value))
        return parts

    def format_pause(self, step, kind="checkpoint"):
        """The pause notice's datagram as bytes, or None (no job id, no valid step, a kind not in
        PAUSE_KINDS)."""
        step = _integer(step, 2**64, "step")
        if not self._job or step is None or kind not in PAUSE_KINDS:
            return None
        parts = self._identity_parts()
        parts.append("step=%d" % step)
        parts.append("pause=" + kind)
        if self._gpu >= 0:
            parts.append("gpu=%d" % self._gpu)
        data = " ".join(parts).encode("ascii")
        return data if len(data) <= DGRAM_MAX else None

    def report(self, step, seconds, **optional):
        """Sends one report; True when the datagram was handed to the kernel, False when it was
        dropped (counted). Never raises, never blocks. Keyword arguments as format()."""
        return self._send(lambda: self.format(step, seconds, **optional))

    def pause(self, step, kind="checkpoint"):
        """Tells the agent the job stops stepping on purpose after step `step` (the last one
        completed) for a checkpoint save, an evaluation or some other reason (PAUSE_KINDS); the
        next report() ends the pause. houston then waits at least its hang-pause-max (45
        minutes by default) before it calls the job hung. Returns and drops as report()."""
        return self._send(lambda: self.format_pause(step, kind))

    def _send(self, make):
        try:
            data = make()
            if data is None:
                raise ValueError("no job id, or an invalid step, duration or pause kind")
            sock = self._sock
            if sock is None:
                sock = self._open_socket()
            sock.sendto(data, getattr(socket, "MSG_DONTWAIT", 0), self._path)
            return True
        except Exception as e:  # noqa: BLE001 - report() must never raise
            with self._lock:
                self._dropped += 1
                self.last_error = e
            return False

    def _open_socket(self):
        with self._lock:
            if self._sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                sock.setblocking(False)  # Python sockets are close-on-exec already
                self._sock = sock
            return self._sock

    def close(self):
        """Closes the socket; a later report() opens a new one."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown may have torn down socket
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open():  # noqa: A001 - mirrors hn_step_open(); shadows the builtin only inside this module
    """A new Reporter with identity from the environment."""
    return Reporter()


_default = None
_default_lock = threading.Lock()
_reporters = weakref.WeakSet()


def _after_fork():
    """In a forked child: new locks. A lock that another thread of the parent held at the
    fork stays held in the child for good (that thread is not there to release it), and
    report() would wait on it for ever."""
    global _default_lock
    _default_lock = threading.Lock()
    for r in list(_reporters):
        r._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _module_reporter():
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Reporter()
    return _default


def report(step, seconds, **optional):
    """report() on a module-wide Reporter made on first use. Never raises."""
    try:
        return _module_reporter().report(step, seconds, **optional)
    except Exception:  # noqa: BLE001
        return False


def pause(step, kind="checkpoint"):
    """pause() on the module-wide Reporter. Never raises."""
    try:
        return _module_reporter().pause(step, kind)
    except Exception:  # noqa: BLE001
        return False
