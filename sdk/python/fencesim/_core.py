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
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode


class ProtocolError(Exception):
    """fencesim sent something this SDK does not understand."""


class RequestTimeout(Exception):
    """A request got no answer within its timeout (``"error": "timeout"``)."""


class _RunEnded(BaseException):
    """Unwinds a task when the run ends (``end``); never seen by user code
    that catches Exception."""


class _Task:
    """A task: the main one runs on the process's main thread, each spawned
    one on its own thread. Exactly one holds the baton at a time."""

    def __init__(self, sched, fn, name, thread=True):
        self.sched = sched
        self.fn = fn
        self.name = name
        self.go = threading.Event()
        self.done = False
        self.thread = threading.Thread(target=self._main, name=name, daemon=True) if thread else None

    def _main(self):
        sched = self.sched
        try:
            sched._wait_for_baton(self)
            self.fn()
        except _RunEnded:
            return
        except SystemExit as e:
            if e.code not in (None, 0):
                sched.fail(e)
        except BaseException as e:  # the program's own failure
            sched.fail(e)
        self.done = True
        if not sched.ended:
            sched._schedule_from(self, finished=True)


class Channel:
    """stdin/stdout JSON lines, ids, and the scheduler of tasks.

    The scheduler has no thread of its own: a task that must wait runs it
    (hands the baton to the next ready task, or, when none is ready, sends
    yield and reads the next delivery). A program with one task therefore
    never switches threads."""

    def __init__(self, stdin, stdout):
        self._in = stdin
        self._out = stdout
        self._ready = collections.deque()
        self._tasks = []
        self._waiters = {}  # id -> [task, delivery or None]
        self._streams = {}  # id -> [deque of deliveries, waiter or None] (etcd Watch)
        self._by_thread = {}
        self._next_id = 1
        self._end_waiter = None
        self.end_message = None
        self.main = None
        self.init = None
        self.time = {"wall": 0, "monotonic": 0}
        self.ended = False
        self.check_fn = None  # a resource program's check (fencesim.check)
        self.in_check = False  # while the check runs: no sleep, no request

    # --- lines -----------------------------------------------------------
    def send(self, msg):
        """Queues one line; lines go out together at the next flush (before
        the program waits for fencesim: its yield, or a `now`)."""
        self._out.write(_dumps(msg) + "\n")

    def flush(self):
        self._out.flush()

    def read(self):
        line = self._in.readline()
        if not line:
            # fencesim closed our stdin: it is done with this process.
            if threading.current_thread() is threading.main_thread():
                raise SystemExit(0)
            os._exit(0)
        try:
            msg = json.loads(line)
        except ValueError:
            raise ProtocolError("fencesim sent a line that is not JSON: %r" % line[:200])
        t = msg.get("time")
        if t is not None:
            self.time = t
        return msg

    # --- requests (from a task) ----------------------------------------------
    def new_id(self):
        i = self._next_id
        self._next_id += 1
        return i

    def request(self, msg):
        """Sends a request with a fresh id and waits for its delivery."""
        if self.in_check:
            raise RuntimeError("fencesim: a resource program's check cannot sleep or send requests (%s): it decides "
                               "synchronously, inside the copy's atomic step (PROTOCOL.md \"Resource programs\")"
                               % msg.get("type"))
        i = self._next_id
        self._next_id += 1
        msg["id"] = i
        self.send(msg)
        return self.wait(i)

    def current(self):
        return self._by_thread.get(threading.get_ident())

    def wait(self, i):
        me = self.current()
        if me is None:
            raise RuntimeError("fencesim: a request from a thread fencesim did not start (use fencesim.spawn)")
        w = [me, None]
        self._waiters[i] = w
        self._schedule_from(me)
        self._waiters.pop(i, None)
        return w[1]

    def cancel(self, i):
        if self._waiters.pop(i, None) is not None:
            self.send({"type": "cancel", "id": i})

    # --- streams: requests answered by many deliveries (etcd Watch) --------
    def open_stream(self, msg):
        """Sends a request answered by a stream of pushed deliveries; its id."""
        i = self.new_id()
        msg["id"] = i
        self._streams[i] = [collections.deque(), None]
        self.send(msg)
        return i

    def stream_next(self, i, timeout_ns=None):
        """The stream's next delivery; None after `timeout_ns` of simulated
        time without one."""
        s = self._streams[i]
        if not s[0]:
            me = self.current()
            if me is None:
                raise RuntimeError("fencesim: a wait from a thread fencesim did not start (use fencesim.spawn)")
            w = [me, None]
            timer = None
            if timeout_ns is not None:
                timer = self.new_id()
                self._waiters[timer] = w
                self.send({"type": "timer", "id": timer, "after": max(0, int(timeout_ns))})
            s[1] = w
            self._schedule_from(me)
            s[1] = None
            if timer is not None:
                self.cancel(timer)  # a no-op when it fired
        return s[0].popleft() if s[0] else None

    def close_stream(self, i):
        if self._streams.pop(i, None) is not None:
            self.send({"type": "cancel", "id": i})

    # --- scheduling -------------------------------------------------------
    def fail(self, e):
        """A task raised: the program has failed (fencesim stops the run, exit 3)."""
        import traceback
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)

    def _wait_for_baton(self, me):
        me.go.wait()
        me.go.clear()
        if self.ended:
            raise _RunEnded()

    def _schedule_from(self, me, finished=False):
        """`me` cannot go on (it waits for a delivery, or it has finished):
        runs the next ready task, reading deliveries while none is ready.
        Returns when `me` may go on (never, when it has finished)."""
        while True:
            if self._ready:
                nxt = self._ready.popleft()
                if nxt is me:
                    return
                nxt.go.set()
                if not finished:
                    self._wait_for_baton(me)
                return
            self._out.write('{"type":"yield"}\n')
            self._out.flush()
            msg = self.read()
            if msg.get("type") == "end":
                self.end_message = msg
                if self._end_waiter is not None:
                    self._ready.append(self._end_waiter)
                    continue
                # The run ends while the main task still works: unwind it.
                self.ended = True
                if me is not self.main:
                    self.main.go.set()
                raise _RunEnded()
            self.deliver(msg)

    def spawn(self, fn, name=None):
        t = _Task(self, fn, name or "task-%d" % (len(self._tasks) + 1))
        self._tasks.append(t)
        t.thread.start()
        self._by_thread[t.thread.ident] = t
        self._ready.append(t)
        return t

    def deliver(self, msg):
        """Makes the task a delivery is for ready."""
        kind = msg.get("type")
        s = self._streams.get(msg.get("id")) if kind == "watch" else None
        if s is not None:
            s[0].append(msg)
            if s[1] is not None:
                self._ready.append(s[1][0])
                s[1] = None
            return
        if kind == "check":
            self._decide(msg)
            return
        if kind in ("reply", "timer", "watch"):
            w = self._waiters.get(msg.get("id"))
            if w is None:
                return  # cancelled, or a watch nobody waits for now
            w[1] = msg
            self._ready.append(w[0])
        else:
            raise ProtocolError("unexpected message from fencesim: %r" % (msg,))

    def _decide(self, msg):
        """A resource program: the check's decision, sent before the yield
        (PROTOCOL.md "Resource programs")."""
        if self.check_fn is None:
            self.fail(RuntimeError("fencesim: a check came, and the script registered no check "
                                   "(decorate a function with @fencesim.check)"))
        self.in_check = True
        try:
            d = self.check_fn(msg["request"], msg["state"])
            if not isinstance(d, dict) or "accepted" not in d:
                raise TypeError("a check returns fencesim.accept(...) or fencesim.reject(reason, ...), got %r" % (d,))
            out = _decision(msg["id"], d)
        except BaseException as e:
            self.fail(e)
        finally:
            self.in_check = False
        self.send(out)

    def run_main(self, fn):
        """Runs `fn` as the main task on this thread, then every other task
        until `end`; returns the end message."""
        self.main = _Task(self, fn, "main", thread=False)
        self._by_thread[threading.get_ident()] = self.main
        fn()
        self.main.done = True
        self._end_waiter = self.main
        self._schedule_from(self.main)
        return self.end_message

    def finish(self):
        """The run is over: every task still waiting is unwound."""
        self.ended = True
        for t in self._tasks:
            if not t.done:
                t.go.set()
                t.thread.join(5)
        self._tasks = []
        self._ready.clear()
        self._waiters.clear()
        self._streams.clear()
        self._by_thread = {}
        self._end_waiter = None
        self.end_message = None
        self.main = None
        self.check_fn = None


def open_channel():
    """The protocol's pipes. The user's ``print`` goes to stderr: stdout is
    fencesim's (PROTOCOL.md "Transport")."""
    out = os.fdopen(os.dup(1), "w", buffering=1 << 16, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return Channel(sys.stdin, out)


def _integer(what, v):
    if isinstance(v, bool) or not isinstance(v, int) or not -2**63 <= v < 2**63:
        raise TypeError("%s must be an integer from -2**63 to 2**63-1, got %r" % (what, v))
    return v


def _decision(check_id, d):
    """The `decision` line for a check's answer `d` (accept(...)/reject(...)
    or a dict of the same shape), checked before it is sent."""
    if not isinstance(d["accepted"], bool):
        raise TypeError("a decision's accepted is True or False, got %r (return fencesim.accept(...) "
                        "or fencesim.reject(reason, ...))" % (d["accepted"],))
    reason = d.get("reason")
    if not d["accepted"] and (not isinstance(reason, str) or not reason.strip()):
        raise TypeError("a rejection needs a reason, visible text; got %r (return fencesim.reject(reason, ...))"
                        % (reason,))
    out = {"type": "decision", "id": check_id, "accepted": d["accepted"]}
    if reason is not None:
        out["reason"] = reason
    marks = d.get("marks")
    if marks is not None:
        if not isinstance(marks, dict):
            raise TypeError("marks must be a dict of integers by name, e.g. {\"row-1\": 7}; got %r" % (marks,))
        out["marks"] = {str(k): _integer("the mark %r" % (k,), v) for k, v in marks.items()}
    for k in ("last_written", "last_seen"):
        if d.get(k) is not None:
            out[k] = _integer(k, d[k])
    return out
