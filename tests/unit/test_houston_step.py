"""test_houston_step.py - the Python step-report client (python/houston_step.py): the datagram
for valid input, the same text as the C client's unit test (tests/unit/test_step_client.c)
expects, and wrong arguments (a str or a bool where a number goes) dropped and counted, never
read as the number they spell or as 1. Standard library only; run by CTest as
unit/test_houston_step."""

import math
import os
import pathlib
import signal
import socket
import sys
import tempfile
import threading
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("HN_SOURCE_DIR", os.path.join(HERE, "..", "..")),
                                "python"))

import houston_step  # noqa: E402 - after the path above

IDENTITY = "hs1 job=42 rank=3 lrank=1 world=16"


def reporter(path=None):
    """A reporter for job 42, rank 3 of 16, local rank 1, sending to path (None: nowhere)."""
    for name in ("SLURM_JOB_ID", "HOUSTON_JOB_ID", "RANK", "SLURM_PROCID", "LOCAL_RANK",
                 "SLURM_LOCALID", "WORLD_SIZE", "SLURM_NTASKS", "HOUSTON_STEP_SOCKET"):
        os.environ.pop(name, None)
    r = houston_step.open()
    r.set_identity(job="42", rank=3, local_rank=1, world=16)
    r.set_socket(path or "/nonexistent/houston/step.sock")
    return r


class ValidInput(unittest.TestCase):
    """The bytes the C client sends for the same values (test_step_client.c)."""

    def test_every_field(self):
        r = reporter()
        r.set_gpu(5)
        got = r.format(100, 1.5, tokens=4096, forward_s=0.5, backward_s=0.75, optimizer_s=0.125,
                       comm_s=0.0625, checkpoint=90, tflops=400.5, flops_per_token=2.4e12)
        self.assertEqual(got, (IDENTITY + " step=100 dur=1.5 tokens=4096 fwd=0.5 bwd=0.75"
                               " opt=0.125 comm=0.0625 ckpt=90 tflops=400.5 fpt=2.4e+12"
                               " gpu=5").encode())

    def test_optional_left_out(self):
        r = reporter()
        r.set_gpu(-3)
        got = r.format(7, 0.25, tokens=-5, forward_s=-1.0, backward_s=math.nan,
                       optimizer_s=math.inf, comm_s=-math.inf, checkpoint=-1, tflops=math.nan)
        self.assertEqual(got, (IDENTITY + " step=7 dur=0.25").encode())
        got = r.format(7, 0.25, tokens=0, comm_s=-0.0, checkpoint=0)
        self.assertEqual(got, (IDENTITY + " step=7 dur=0.25 tokens=0 comm=0 ckpt=0").encode())
        for seconds in (math.nan, -0.5, math.inf, None):
            self.assertIsNone(r.format(7, seconds))

    def test_numbers(self):
        r = reporter()
        for value, text in ((0.123456789012, "0.123456789"), (123456.7, "123456.7"),
                            (1e-5, "1e-05"), (75.2496, "75.2496"),
                            (1234567891.5, "1.23456789e+09"), (3.0, "3"), (3, "3")):
            self.assertEqual(r.format(1, value), (IDENTITY + " step=1 dur=" + text).encode())
        # An integral float is a whole number (pandas and JSON give them); the largest step fits.
        self.assertEqual(r.format(12.0, 1), (IDENTITY + " step=12 dur=1").encode())
        self.assertEqual(r.format(2**64 - 1, 0), (IDENTITY + " step=%d dur=0" % (2**64 - 1))
                         .encode())
        self.assertIsNone(r.format(12.5, 1))
        self.assertIsNone(r.format(2**64, 1))
        self.assertEqual(r.format_pause(9, "eval"), (IDENTITY + " step=9 pause=eval").encode())


class WrongArguments(unittest.TestCase):
    """A str or a bool is not a number: the report is dropped, counted, and its reason kept."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hn-test-houston-step-")
        self.path = os.path.join(self.dir, "step.sock")
        self.rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.rx.bind(self.path)
        self.rx.setblocking(False)
        self.r = reporter(self.path)

    def tearDown(self):
        self.r.close()
        self.rx.close()
        os.unlink(self.path)
        os.rmdir(self.dir)

    def received(self):
        out = []
        while True:
            try:
                out.append(self.rx.recv(4096))
            except BlockingIOError:
                return out

    def dropped(self, call, *args, **kwargs):
        before = self.r.dropped
        self.assertIs(call(*args, **kwargs), False, (args, kwargs))
        self.assertEqual(self.r.dropped, before + 1)
        self.assertIsInstance(self.r.last_error, TypeError)
        self.assertEqual(self.received(), [], (args, kwargs))

    def test_report(self):
        self.assertIs(self.r.report(1, 1.0), True)
        self.assertEqual(self.received(), [(IDENTITY + " step=1 dur=1").encode()])
        for wrong in ("1", "1.0", b"1", True, False):
            self.dropped(self.r.report, 1, wrong)
            self.dropped(self.r.report, wrong, 1.0)
            for name in ("tokens", "forward_s", "backward_s", "optimizer_s", "comm_s",
                         "checkpoint", "tflops", "flops_per_token"):
                self.dropped(self.r.report, 1, 1.0, **{name: wrong})
        self.dropped(self.r.report, 1, [1.0])
        self.dropped(self.r.pause, True)
        self.dropped(self.r.pause, "1")
        self.dropped(self.r.report, 1, "1.0")
        self.assertEqual(str(self.r.last_error), "seconds must be a number, not str")
        self.assertEqual(self.r.dropped, 5 * 10 + 1 + 2 + 1)

    def test_module_report(self):
        """houston_step.report() through the module's reporter: the same rule."""
        houston_step._default = self.r
        try:
            self.assertIs(houston_step.report(1, "1.0"), False)
            self.assertIs(houston_step.report(1, True), False)
            self.assertIs(houston_step.report(1, 1.0), True)
            self.assertEqual(self.received(), [(IDENTITY + " step=1 dur=1").encode()])
        finally:
            houston_step._default = None

    def test_setters(self):
        """The setters never raise: a str or a bool keeps the current value."""
        self.r.set_gpu(2)
        for wrong in (True, "3", b"3"):
            self.r.set_gpu(wrong)
            self.r.set_identity(rank=wrong, local_rank=wrong, world=wrong)
        self.assertEqual(self.r.identity, ("42", 3, 1, 16))
        self.assertEqual(self.r.format(1, 1), (IDENTITY + " step=1 dur=1").encode())
        self.r.set_gpu(4)
        self.assertEqual(self.r.format(1, 1), (IDENTITY + " step=1 dur=1 gpu=4").encode())
        for wrong in (123, True, None, ["/tmp/x"]):
            self.r.set_socket(wrong)
        self.assertIs(self.r.report(1, 1.0), True)  # still to the test's socket
        self.assertEqual(len(self.received()), 1)
        self.r.set_socket(pathlib.Path(self.path))
        self.assertIs(self.r.report(2, 1.0), True)
        self.assertEqual(len(self.received()), 1)

    def test_job_and_limits(self):
        """A job id given as an int is its digits; one of another type, or a count above what
        the agent takes (COUNT_MAX), keeps the current value; a value beyond a double leaves
        its field out. Nothing raises."""
        r = reporter()
        r.set_identity(job=1234)
        self.assertEqual(r.identity[0], "1234")
        for wrong in (1.5, 2**40 + 0.5, None, object(), True):
            r.set_identity(job=wrong)
        self.assertEqual(r.identity[0], "1234")
        r.set_identity(job=b"77")
        self.assertEqual(r.identity[0], "77")
        r.set_identity(rank=houston_step.COUNT_MAX + 1, world=2**31 - 1)
        self.assertEqual(r.identity[1:], (3, 1, 16))
        r.set_gpu(houston_step.COUNT_MAX + 1)
        self.assertEqual(r.format(1, 1), b"hs1 job=77 rank=3 lrank=1 world=16 step=1 dur=1")
        self.assertEqual(r.format(1, 1, tflops=10**400, tokens=10**400),
                         b"hs1 job=77 rank=3 lrank=1 world=16 step=1 dur=1")
        os.environ["RANK"] = str(houston_step.COUNT_MAX + 1)
        os.environ["SLURM_PROCID"] = str(houston_step.COUNT_MAX)
        try:
            self.assertEqual(houston_step.open().identity[1], houston_step.COUNT_MAX)
        finally:
            del os.environ["RANK"], os.environ["SLURM_PROCID"]


class Environment(unittest.TestCase):
    """Identity from the launcher's variables, read as the C client reads them."""

    def test_leading_zeros(self):
        """A count in the environment is read by its value, as the C client reads it: leading
        zeros do not make plain digits invalid, however many there are, and a value above
        COUNT_MAX is skipped however it is written."""
        names = ("RANK", "SLURM_PROCID", "LOCAL_RANK", "SLURM_LOCALID", "WORLD_SIZE",
                 "SLURM_NTASKS")
        saved = {name: os.environ.pop(name, None) for name in names}
        try:
            os.environ["RANK"] = "0" * 20 + "7"
            os.environ["LOCAL_RANK"] = "00000000003"
            os.environ["WORLD_SIZE"] = "0" * 5000 + "16"
            self.assertEqual(houston_step.open().identity[1:], (7, 3, 16))
            os.environ["RANK"] = "0" * 20 + str(houston_step.COUNT_MAX + 1)
            os.environ["SLURM_PROCID"] = "0" * 20
            os.environ["LOCAL_RANK"] = "9" * 5000
            self.assertEqual(houston_step.open().identity[1:3], (0, -1))
        finally:
            for name, value in saved.items():
                os.environ.pop(name, None)
                if value is not None:
                    os.environ[name] = value


class Fork(unittest.TestCase):
    """A process forked while another thread held a reporter's lock (counting a drop, opening
    the socket) reports without waiting for it: report() never blocks, in a child either."""

    def child_reports(self, call):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                call()
            finally:
                os._exit(0)
        for _ in range(100):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return True
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False

    def held_while_forking(self, lock, call):
        held, release = threading.Event(), threading.Event()

        def hold():
            with lock:
                held.set()
                release.wait()

        t = threading.Thread(target=hold)
        t.start()
        held.wait()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
                return self.child_reports(call)
        finally:
            release.set()
            t.join()

    def test_reporter_lock(self):
        r = reporter()  # sends nowhere: the report is a drop, counted under the lock
        self.assertTrue(self.held_while_forking(r._lock, lambda: r.report(1, 1.0)),
                        "report() blocked in a child forked while the lock was held")
        r.close()

    def test_module_lock(self):
        houston_step._default = None
        os.environ["HOUSTON_STEP_SOCKET"] = "/nonexistent/houston/step.sock"
        try:
            self.assertTrue(self.held_while_forking(houston_step._default_lock,
                                                    lambda: houston_step.report(1, 1.0)),
                            "houston_step.report() blocked in a forked child")
        finally:
            del os.environ["HOUSTON_STEP_SOCKET"]


if __name__ == "__main__":
    unittest.main()
