"""The solution sandbox's server: loads the model's code, then answers calls from the judge.

Only plain literals cross: a request is ``repr((name, args, kwargs))``, an answer is
``repr(("ok", value))``, ``repr(("raise", exception_name, message))`` or ``repr(("bad_result", why))``.
Nothing trusted lives in this process: the model's code may rewrite all of it and only garble its
own answers. Runs as ``python3 -I -S server.py``; the model's code is ``/sandbox/solution.py``.
"""

import ast
import os

SOLUTION = "/sandbox/solution.py"
MAX_REQUEST = 64 << 20  # arguments come from trusted tests; the cap only keeps memory bounded


def main():
    # The link to the judge is our stdin/stdout; move it off fds 0/1 so prints cannot corrupt it.
    link_in = os.fdopen(os.dup(0), "rb", buffering=0)
    link_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)

    def send(message):
        try:
            text = repr(message)
        except BaseException as exc:  # a result whose repr fails or recurses
            text = repr(("bad_result", "repr() of the result raised " + type(exc).__name__))
        link_out.write(text.encode("utf-8", "backslashreplace") + b"\n")

    namespace = {"__name__": "solution", "__file__": SOLUTION}
    try:
        with open(SOLUTION, encoding="utf-8") as handle:
            code = compile(handle.read(), "solution.py", "exec")
        exec(code, namespace)  # noqa: S102 - this process is the sandbox built for exactly this
    except BaseException as exc:  # SystemExit too: exiting at import is a load failure
        send(("load_error", f"{type(exc).__name__}: {str(exc)[:500]}"))
        return
    send(("ready",))
    while True:
        line = link_in.readline(MAX_REQUEST)
        if not line:
            return
        if not line.endswith(b"\n"):  # over the cap: skip the rest of this request, answer it, stay in step
            while line and not line.endswith(b"\n"):
                line = link_in.readline(MAX_REQUEST)
            send(("bad_result", f"the arguments are over {MAX_REQUEST} bytes"))
            continue
        try:
            name, args, kwargs = ast.literal_eval(line.decode("utf-8"))
        except (ValueError, SyntaxError, TypeError) as exc:
            send(("bad_result", f"unreadable request: {exc}"))
            continue
        function = namespace.get(name)
        if not callable(function):
            send(("raise", "NameError", f"name {name!r} is not defined by the solution"))
            continue
        try:
            value = function(*args, **kwargs)
        except BaseException as exc:
            send(("raise", type(exc).__name__, str(exc)[:500]))
            continue
        send(("ok", value))


if __name__ == "__main__":
    if (
        os.getpid() != 2
    ):  # only ever the program under a verigrpo sandbox's init: refuse to exec model code anywhere else
        raise SystemExit("server.py runs model code and must only run inside the sandbox (as pid 2, under its init)")
    main()
