"""The protocol of docs/PROTOCOL.md (version 1) and the lockstep scheduler.

One process speaks to fencesim over stdin/stdout, JSON lines. Tasks (the
user's main function or script, and what it starts with ``spawn``) are
threads that pass a baton: exactly one runs at a time, and a task gives the
baton back only when it waits for a delivery (a reply, a timer). After each
delivery the scheduler runs the task(s) it woke and every task that became
runnable, in FIFO order, until all wait; then it sends ``yield``
(PROTOCOL.md "Lockstep"). So a program that is deterministic given its
inputs makes a deterministic run.
"""
import collections
import json
import os
import sys
import threading

PROTOCOL = 1


class ProtocolError(Exception):
    """fencesim sent something this SDK does not understand."""


class RequestTimeout(Exception):
    """A request got no answer within its timeout (``"error": "timeout"``)."""


class _RunEnded(BaseException):
    """Unwinds a task when the run ends (``end``); never seen by user code
    that catches Exception."""


class _Task:
    def __init__(self, sched, fn, name):
        self.sched = sched
        self.fn = fn
        self.name = name
        self.go = threading.Event()
        self.done = False
        self.error = None
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)

    def _main(self):
        self.go.wait()
        self.go.clear()
        try:
            if not self.sched.ended:
                self.fn()
        except _RunEnded:
            pass
        except SystemExit as e:
            if e.code not in (None, 0):
                self.error = e
        except BaseException as e:  # the program's own failure
            self.error = e
        finally:
            self.done = True
            self.sched._back.set()


class Channel:
    """stdin/stdout JSON lines, ids, and the scheduler of tasks."""

    def __init__(self, stdin, stdout):
        self._in = stdin
        self._out = stdout
        self._back = threading.Event()
        self._ready = collections.deque()
        self._tasks = []
        self._waiters = {}  # id -> [task, delivery or None]
        self._next_id = 1
        self.current = None
        self.init = None
        self.time = {"wall": 0, "monotonic": 0}
        self.ended = False

    # --- lines -----------------------------------------------------------
    def send(self, msg):
        self._out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        self._out.flush()

    def read(self):
        line = self._in.readline()
        if not line:
            raise _RunEnded()  # fencesim has gone: nothing more will come
        try:
            msg = json.loads(line)
        except ValueError:
            raise ProtocolError("fencesim sent a line that is not JSON: %r" % line[:200])
        if "time" in msg:
            self.time = msg["time"]
        return msg

    # --- requests (from a task) ----------------------------------------------
    def new_id(self):
        i = self._next_id
        self._next_id += 1
        return i

    def request(self, msg):
        """Sends a request with a fresh id and waits for its delivery."""
        i = self.new_id()
        msg["id"] = i
        self.send(msg)
        return self.wait(i)

    def wait(self, i):
        task = self.current
        if task is None:
            raise RuntimeError("fencesim: a request outside a task")
        self._waiters[i] = [task, None]
        self._block(task)
        got = self._waiters.pop(i)[1]
        return got

    def cancel(self, i):
        if self._waiters.pop(i, None) is not None:
            self.send({"type": "cancel", "id": i})

    def _block(self, task):
        self._back.set()
        task.go.wait()
        task.go.clear()
        if self.ended:
            raise _RunEnded()

    # --- scheduling (the main thread) ------------------------------------------
    def spawn(self, fn, name=None):
        t = _Task(self, fn, name or "task-%d" % (len(self._tasks) + 1))
        self._tasks.append(t)
        t.thread.start()
        self._ready.append(t)
        return t

    def _run_ready(self):
        while self._ready:
            t = self._ready.popleft()
            self.current = t
            self._back.clear()
            t.go.set()
            self._back.wait()
            self.current = None
            if t.done and t.error is not None:
                raise t.error

    def deliver(self, msg):
        """Wakes the task a delivery is for."""
        kind = msg.get("type")
        if kind in ("reply", "timer", "watch"):
            w = self._waiters.get(msg.get("id"))
            if w is None:
                return  # cancelled, or a watch nobody waits for now
            w[1] = msg
            self._ready.append(w[0])
        else:
            raise ProtocolError("unexpected message from fencesim: %r" % (msg,))

    def run_until_end(self):
        """Runs tasks and deliveries until ``end``; returns it."""
        while True:
            self._run_ready()
            self.send({"type": "yield"})
            msg = self.read()
            if msg.get("type") == "end":
                return msg
            self.deliver(msg)

    def finish(self):
        """The run is over: every task still waiting is unwound."""
        self.ended = True
        for t in self._tasks:
            if not t.done:
                self._back.clear()
                t.go.set()
                self._back.wait()
        self._tasks = []
        self._ready.clear()
        self._waiters.clear()


def open_channel():
    """The protocol's pipes. The user's ``print`` goes to stderr: stdout is
    fencesim's (PROTOCOL.md "Transport")."""
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return Channel(sys.stdin, out)
