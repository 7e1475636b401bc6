"""The judge sandbox: runs the trusted tests against a proxy of the model's function.

The function under test lives in another sandbox. Calls go out as ``repr()`` of the arguments and
results come back as plain literals (``ast.literal_eval``, size-capped), so no object the model made
ever reaches this process: no rigged ``__eq__``, no frame walking, nothing to steal. Exceptions come
back by builtin name and are re-raised as that type. One JSON verdict line per test goes to stdout;
the host counts them and fails any test without one.

Everything the solution controls is bounded before it is used, so no completion can make the judge
fail or overrun: an answer must be under ``MAX_RESPONSE`` bytes *and* ``MAX_RESPONSE_TOKENS`` tokens
before ``ast.literal_eval`` sees it (parsing costs ~2 us per token on a loaded 2-core box: 4 MB of
``[[], [], ...]`` took 5 s, past the host's wait), and every output line is cut to ``MAX_LINE`` bytes.
Exceptions with control-flow meaning are not re-raised as themselves (see ``builtin_exception``).

Output (stdout, one JSON object per line, written only by this trusted process):
``{"test": i, "passed": bool, "message": str[, "limit": "timeout"|"memory"]}`` per test;
``{"setup_error": true, "message": str}`` when the trusted prelude itself fails (the tests are unusable);
``{"done": true}`` last.

Usage (host-made): ``python3 -I -S judge.py READ_FD WRITE_FD TIME_FD`` (TIME_FD turns readable when the
host says the solution's time is up) with ``/judge/spec.json``
holding ``{"prelude": str, "tests": [str], "names": [str], "entry_point": str}``.
"""

import ast
import builtins
import json
import os
import re
import select
import sys

SPEC = "/judge/spec.json"
MAX_RESPONSE = 4 << 20  # a bigger answer is refused (and the solution cut off)
MAX_RESPONSE_TOKENS = 200_000  # ~0.4 s of ast.literal_eval under load; lists of ~100k numbers still cross
MAX_MESSAGE = 300  # characters of any text the solution can influence that goes into a verdict
MAX_LINE = 2048  # bytes per output line (the host reads at most 4096 per test)

# An upper bound on the tokens Python's parser will see: string literals (any quoting, escapes, or
# left open, which the parser rejects at that point) are one token, a run of word characters is one,
# any other character is one. Every alternative ends on a match that cannot fail, so no backtracking:
# linear in the text (~0.3 s for 4 MB of escaped quotes).
_TOKEN = re.compile(
    r"'''(?:[^'\\]+|\\.|'(?!''))*(?:'''|\\?\Z)"
    r'|"""(?:[^"\\]+|\\.|"(?!""))*(?:"""|\\?\Z)'
    r"|'(?:[^'\\]+|\\.)*(?:'|\\?\Z)"
    r'|"(?:[^"\\]+|\\.)*(?:"|\\?\Z)'
    r"|[\w.]+|\S",
    re.S,
)

# Builtin exceptions that mean "stop" to the code that catches them: re-raised as themselves, a
# StopIteration ends ``all(map(candidate, xs))`` early and passes it (PEP 479 turns it into RuntimeError
# inside generators for the same reason). The BaseException-only names (SystemExit, KeyboardInterrupt,
# GeneratorExit, BaseExceptionGroup) never cross: only Exception subclasses do.
CONTROL_FLOW = {"StopIteration", "StopAsyncIteration"}


class SolutionGone(BaseException):
    """The solution stopped answering (exit, crash, timeout, garbage). Not an Exception: tests cannot catch it."""


def clip(text, limit=MAX_MESSAGE):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


class Output:
    """The verdict stream (a dup of the original stdout): bounded JSON lines, nothing else writes to it."""

    def __init__(self, fd):
        self.stream = os.fdopen(fd, "w", buffering=1)

    def write(self, record):
        line = json.dumps(record)  # ASCII: a lone surrogate from the solution cannot break the encoding
        while len(line) > MAX_LINE and record.get("message"):
            record["message"] = record["message"][: len(record["message"]) // 2]
            line = json.dumps(record)
        self.stream.write(line + "\n")


class Link:
    """The pipe pair to the solution sandbox, and the host's time signal shared by all calls.

    The host times the solution (its own time: the wall clock less its waits for a CPU, which only the
    host can see) and makes ``time_fd`` readable when the time is up, by writing to it or closing it.
    """

    def __init__(self, read_fd, write_fd, time_fd):
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.time_fd = time_fd
        self.buffer = bytearray()
        self.dead = None  # why the solution is no longer usable
        self.limit = None

    def send(self, text):
        data = text.encode("utf-8") + b"\n"
        while data:
            time_up, ready, _ = select.select([self.time_fd], [self.write_fd], [])
            if time_up:
                self.kill("time limit reached sending to the solution", "timeout")
            if not ready:
                continue
            try:
                data = data[os.write(self.write_fd, data) :]
            except BlockingIOError:
                continue
            except OSError as exc:
                self.kill(f"the solution stopped reading ({exc.strerror})")

    def receive(self):
        searched = 0
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer)
            if len(self.buffer) > MAX_RESPONSE:
                self.kill(f"the solution's answer is over {MAX_RESPONSE} bytes")
            ready, _, _ = select.select([self.read_fd, self.time_fd], [], [])
            if self.time_fd in ready:
                self.kill("time limit reached waiting for the solution", "timeout")
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                self.kill("the solution process ended")
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        if end > MAX_RESPONSE:
            self.kill(f"the solution's answer is over {MAX_RESPONSE} bytes")
        try:
            text = line.decode("utf-8")
            if _TOKEN.subn("", text, count=MAX_RESPONSE_TOKENS + 1)[1] > MAX_RESPONSE_TOKENS:
                self.kill(f"the solution's answer is over {MAX_RESPONSE_TOKENS} tokens")
            message = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, UnicodeDecodeError):
            self.kill("the solution sent something that is not a plain literal")
        if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
            self.kill("the solution sent a malformed message")
        return message

    def kill(self, why, limit=None):
        if self.dead is None:
            self.dead = clip(why)
            self.limit = limit  # "timeout" when the deadline cut the solution off: reported to the host
        raise SolutionGone(self.dead)


def builtin_exception(name, message):
    """The builtin exception class called ``name`` (so ``raises(ValueError)`` tests work), else RuntimeError.

    Audit of what crosses: only ``Exception`` subclasses, never ``CONTROL_FLOW`` (turned into
    RuntimeError as PEP 479 does). The rest only fail a test, or pass one that expects exactly that
    exception from the candidate (which is then the right behaviour). A class that cannot be built
    from one message (UnicodeDecodeError, ExceptionGroup) becomes RuntimeError, not the TypeError its
    constructor would raise.
    """
    name, message = clip(name, 100), clip(message)
    candidate = getattr(builtins, name, None)
    if isinstance(candidate, type) and issubclass(candidate, Exception) and name not in CONTROL_FLOW:
        try:
            return candidate(message)
        except Exception:
            pass
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
            raise builtin_exception(message[1], message[2])
        if message[0] == "bad_result":
            raise TypeError(f"the solution returned a value that is not a plain literal ({clip(message[1:])})")
        link.kill("the solution sent an unknown message")

    proxy.__name__ = name
    return proxy


def describe(test_source, exc):
    first_line = test_source.strip().splitlines()[0] if test_source.strip() else "<test>"
    if isinstance(exc, AssertionError):
        detail = (f": {clip(exc)}") if str(exc) else ""
        return f"failed: {first_line[:200]}{detail}"
    return f"{type(exc).__name__}: {clip(exc)} (in: {first_line[:200]})"


def main():
    read_fd, write_fd, time_fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    output = Output(os.dup(1))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # test code that prints cannot forge verdict lines
    with open(SPEC, encoding="utf-8") as handle:
        spec = json.load(handle)
    os.set_blocking(write_fd, False)  # a solution that never reads must not hang the judge
    link = Link(read_fd, write_fd, time_fd)

    def verdict(index, passed, message="", limit=None):
        record = {"test": index, "passed": passed, "message": message}
        if limit:
            record["limit"] = limit  # set by this trusted process only, never parsed from the solution's text
        output.write(record)

    # The trusted setup runs before anything is read from the solution: its failure is the tests' fault.
    namespace = {"__name__": "__judge__"}
    try:
        exec(compile(spec["prelude"], "<test setup>", "exec"), namespace)  # noqa: S102 - trusted test code
    except BaseException as exc:
        output.write({"setup_error": True, "message": f"{type(exc).__name__}: {clip(exc)}"})
        return
    try:
        hello = link.receive()
        if hello[0] == "load_error":
            link.kill(f"the solution failed to load: {clip((hello[1:] or ('',))[0])}")
        if hello != ("ready",):
            link.kill("the solution sent a malformed greeting")
    except SolutionGone:
        pass
    for name in spec["names"]:
        namespace[name] = make_proxy(link, spec["entry_point"])
    for index, test_source in enumerate(spec["tests"]):
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
    output.write({"done": True})


if __name__ == "__main__":
    main()
