"""The judge sandbox: runs the trusted tests against a proxy of the model's function.

The function under test lives in another sandbox. Calls go out as ``repr()`` of the arguments and
results come back as plain literals (``ast.literal_eval``, size-capped), so no object the model made
ever reaches this process: no rigged ``__eq__``, no frame walking, nothing to steal. Exceptions come
back by builtin name and are re-raised as that type. One JSON verdict line per test goes to stdout;
the host counts them and fails any test without one.

Usage (host-made): ``python3 -I -S judge.py READ_FD WRITE_FD SECONDS`` with ``/judge/spec.json``
holding ``{"prelude": str, "tests": [str], "names": [str], "entry_point": str}``.
"""

import ast
import builtins
import json
import os
import select
import sys
import time

SPEC = "/judge/spec.json"
MAX_RESPONSE = 4 << 20  # a bigger answer is refused (and the solution cut off)


class SolutionGone(BaseException):
    """The solution stopped answering (exit, crash, timeout, garbage). Not an Exception: tests cannot catch it."""


class Link:
    """The pipe pair to the solution sandbox, with a deadline shared by all calls."""

    def __init__(self, read_fd, write_fd, deadline):
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.deadline = deadline
        self.buffer = b""
        self.dead = None  # why the solution is no longer usable
        self.limit = None

    def send(self, text):
        data = text.encode("utf-8") + b"\n"
        while data:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.kill("time limit reached sending to the solution", "timeout")
            _, ready, _ = select.select([], [self.write_fd], [], remaining)
            if not ready:
                continue
            try:
                data = data[os.write(self.write_fd, data) :]
            except BlockingIOError:
                continue
            except OSError as exc:
                self.kill(f"the solution stopped reading ({exc.strerror})")

    def receive(self):
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_RESPONSE:
                self.kill(f"the solution's answer is over {MAX_RESPONSE} bytes")
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.kill("time limit reached waiting for the solution", "timeout")
            ready, _, _ = select.select([self.read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                self.kill("the solution process ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = ast.literal_eval(line.decode("utf-8"))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, UnicodeDecodeError):
            self.kill("the solution sent something that is not a plain literal")
        if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
            self.kill("the solution sent a malformed message")
        return message

    def kill(self, why, limit=None):
        if self.dead is None:
            self.dead = why
            self.limit = limit  # "timeout" when the deadline cut the solution off: reported to the host
        raise SolutionGone(self.dead)


def builtin_exception(name, message):
    """The builtin exception class called ``name`` (so ``raises(ValueError)`` tests work), else RuntimeError."""
    candidate = getattr(builtins, name, None)
    if isinstance(candidate, type) and issubclass(candidate, Exception):
        return candidate(message)
    return RuntimeError(f"{name}: {message}")


def make_proxy(link, name):
    def proxy(*args, **kwargs):
        if link.dead is not None:
            raise SolutionGone(link.dead)
        request = repr((name, args, kwargs))
        if ast.literal_eval(request) != (name, args, kwargs):
            raise TypeError("test arguments must be plain literals to cross into the sandbox")
        link.send(request)
        message = link.receive()
        if message[0] == "ok" and len(message) == 2:
            return message[1]
        if message[0] == "raise" and len(message) == 3:
            raise builtin_exception(str(message[1]), str(message[2]))
        if message[0] == "bad_result":
            raise TypeError(f"the solution returned a value that is not a plain literal ({message[1:]})")
        link.kill("the solution sent an unknown message")

    proxy.__name__ = name
    return proxy


def describe(test_source, exc):
    first_line = test_source.strip().splitlines()[0] if test_source.strip() else "<test>"
    if isinstance(exc, AssertionError):
        detail = (f": {exc}") if str(exc) else ""
        return f"failed: {first_line[:200]}{detail[:300]}"
    return f"{type(exc).__name__}: {str(exc)[:300]} (in: {first_line[:200]})"


def main():
    read_fd, write_fd, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    verdicts = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # test code that prints cannot forge verdict lines
    with open(SPEC, encoding="utf-8") as handle:
        spec = json.load(handle)
    os.set_blocking(write_fd, False)  # a solution that never reads must not hang the judge
    link = Link(read_fd, write_fd, time.monotonic() + seconds)

    def verdict(index, passed, message="", limit=None):
        record = {"test": index, "passed": passed, "message": message}
        if limit:
            record["limit"] = limit  # set by this trusted process only, never parsed from the solution's text
        verdicts.write(json.dumps(record) + "\n")

    setup_error = None
    try:
        hello = link.receive()
        if hello[0] == "load_error":
            link.kill("the solution failed to load: {}".format((hello[1:] or ("",))[0]))
        if hello != ("ready",):
            link.kill("the solution sent a malformed greeting")
    except SolutionGone:
        pass
    namespace = {"__name__": "__judge__"}
    try:
        exec(compile(spec["prelude"], "<test setup>", "exec"), namespace)  # noqa: S102 - trusted test code
    except BaseException as exc:
        setup_error = f"the test setup raised {type(exc).__name__}: {exc}"
    for name in spec["names"]:
        namespace[name] = make_proxy(link, spec["entry_point"])
    for index, test_source in enumerate(spec["tests"]):
        if setup_error:
            verdict(index, False, setup_error)
            continue
        if link.dead is not None:
            verdict(index, False, link.dead, link.limit)
            continue
        try:
            exec(compile(test_source, f"<test {index}>", "exec"), namespace)  # noqa: S102 - trusted
        except SolutionGone as exc:
            verdict(index, False, str(exc), link.limit)
        except MemoryError as exc:  # re-raised from the solution's MemoryError (its RLIMIT_AS)
            verdict(index, False, describe(test_source, exc), "memory")
        except BaseException as exc:
            verdict(index, False, describe(test_source, exc))
        else:
            verdict(index, True)


if __name__ == "__main__":
    main()
