"""Real escape attempts and resource attacks against ``rewards.sandbox`` (bubblewrap). Each must fail
inside the sandbox, the call must return within its limit, and no process of the sandbox user may remain
(checked by the ``needs_sandbox`` fixture after every test)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rewards.sandbox import (
    INIT,
    PRLIMIT,
    SandboxLimits,
    bwrap_command,
    python_argv,
    run_sandboxed_sync,
    sandbox_python,
)
from tests.helpers import REPO
from tests.helpers.sandbox import sandbox_processes

pytestmark = pytest.mark.usefixtures("needs_sandbox")

LIMITS = SandboxLimits(
    wall_s=3, cpu_s=2, memory_mb=256, processes=16, file_size_mb=4, tmp_size_mb=8, output_bytes=1 << 16
)


def run_python(code: str, limits: SandboxLimits = LIMITS, **kwargs):
    return run_sandboxed_sync(
        python_argv("/sandbox/main.py"), files={"/sandbox/main.py": code.encode()}, limits=limits, **kwargs
    )


def test_a_plain_program_runs_and_sees_its_stdin():
    result = run_python("import sys; print(sys.stdin.read().upper())", stdin=b"hello")
    assert (result.returncode, result.stdout, result.timed_out) == (0, b"HELLO\n", False)


# --- escapes: each prints ESCAPED only if the attempt worked -----------------------------------------

ESCAPES = {
    "tcp to 127.0.0.1": "import socket\ns = socket.create_connection(('127.0.0.1', 22), timeout=1)\nprint('ESCAPED')",
    "udp socket": "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))\nprint('ESCAPED')",
    "ipv6 socket": "import socket\nsocket.socket(socket.AF_INET6)\nprint('ESCAPED')",
    "netlink socket": "import socket\nsocket.socket(socket.AF_NETLINK, socket.SOCK_RAW)\nprint('ESCAPED')",
    "/etc/shadow": "print(open('/etc/shadow').read()[:1] and 'ESCAPED')",
    "/etc/passwd": "print(open('/etc/passwd').read()[:1] and 'ESCAPED')",
    "/root": "import os\nos.listdir('/root')\nprint('ESCAPED')",
    "nested user namespace (syscall)": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "if libc.unshare(0x10000000) == 0: print('ESCAPED')\nelse: raise OSError(ctypes.get_errno(), 'unshare')"
    ),
    "nested user namespace (unshare tool)": (
        "import subprocess\nr = subprocess.run(['unshare', '-Ur', 'id'], capture_output=True)\n"
        "assert r.returncode != 0, r\nraise PermissionError(r.stderr)"
    ),
    "mount": "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nassert libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) != 0\nraise PermissionError('mount')",
    "ptrace": "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nassert libc.ptrace(16, 1, 0, 0) != 0\nraise PermissionError('ptrace')",
    "write /usr": "open('/usr/pwned', 'w').write('x')\nprint('ESCAPED')",
    "write /": "open('/pwned', 'w').write('x')\nprint('ESCAPED')",
    "write /dev/shm": "open('/dev/shm/pwned', 'w').write('x')\nprint('ESCAPED')",
    "remount / read-write": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "assert libc.mount(None, b'/', None, 0x20 | 0x1000 , None) != 0\n"  # MS_REMOUNT | MS_BIND
        "open('/pwned', 'w').write('x')\nprint('ESCAPED')"
    ),
    "setuid root": "import os\nos.setuid(0)\nprint('ESCAPED')",
}


@pytest.mark.parametrize("attack", ESCAPES.values(), ids=ESCAPES.keys())
def test_escape_attempts_fail(attack):
    result = run_python(attack)
    assert b"ESCAPED" not in result.stdout
    assert result.returncode not in (0, None), result


def test_project_directory_is_not_visible(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    result = run_python(
        f"import os\nprint(os.path.exists({here!r}), os.path.exists({str(tmp_path)!r}), sorted(os.listdir('/')))"
    )
    exists_here, exists_tmp, listing = result.stdout.decode().split(" ", 2)
    assert (exists_here, exists_tmp) == ("False", "False")
    assert "work" not in listing and "root" not in listing and "home" not in listing and "etc" not in listing


def test_host_environment_is_unseen(monkeypatch):
    monkeypatch.setenv("VERIGRPO_TEST_SECRET", "hunter2-token")
    code = (
        "import os\nseen = repr(dict(os.environ))\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        seen += open(f'/proc/{pid}/environ', 'rb').read().decode()\n"
        "print(seen)"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert b"hunter2" not in result.stdout and b"VERIGRPO_TEST_SECRET" not in result.stdout
    assert b"PATH" in result.stdout  # the check looked at a real environment


def test_other_processes_are_invisible_in_proc():
    code = "import os\nprint(sorted(p for p in os.listdir('/proc') if p.isdigit()), os.getpid(), open('/proc/1/comm').read())"
    result = run_python(code)
    # only its own namespace: the init (pid 1) and itself, its one child
    assert result.stdout.decode().split() == ["['1',", "'2']", "2", "timeout"], result.stderr
    result = run_python(f"open('/proc/{os.getpid()}/cmdline').read()\nprint('ESCAPED')")
    assert b"ESCAPED" not in result.stdout


def test_runs_as_unprivileged_user_without_capabilities():
    result = run_python("import os\nprint(os.getuid(), os.geteuid())\nprint(open('/proc/self/status').read())")
    lines = result.stdout.decode().splitlines()
    assert lines[0] != "0 0"
    caps = {line.split(":")[0]: line.split()[1] for line in lines if line.startswith("Cap")}
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapBnd"] == "0000000000000000"


def test_the_command_line_has_the_hardening():
    command = bwrap_command(["true"], {}, SandboxLimits(), 10, 11)
    for flag in ["--unshare-all", "--disable-userns", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv"]:
        assert flag in command
    assert command[command.index("--cap-drop") + 1] == "ALL"
    # bwrap execs the init (pid 1), which runs prlimit, which execs the program
    assert command.index("--") < command.index(INIT) < command.index(PRLIMIT) < command.index("true")


# --- the program is an ordinary process: the signals a host process gets (issue #43) ------------------
# As the namespace's pid 1 it got none it had no handler for: each of these but SIGINT exited 0, 1 or ran to the
# wall limit before. SIGINT (Python handles it) held before too: it guards the init, which must not ignore it.
# (command, exit status: 128 + the signal that ended it)
SIGNALS = {
    "shell signals itself": (["/bin/sh", "-c", "kill -TERM $$"], 128 + signal.SIGTERM),
    "python signals itself": (["-c", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)"], 128 + signal.SIGTERM),
    "signal.alarm as a timeout": (["-c", "import signal, time\nsignal.alarm(1)\ntime.sleep(30)"], 128 + signal.SIGALRM),
    "SIGTERM to pid 1 reaches the program": (["/bin/sh", "-c", "kill -TERM 1; sleep 30"], 128 + signal.SIGTERM),
    "SIGINT is KeyboardInterrupt": (
        ["-c", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(30)"],
        128 + signal.SIGINT,  # Python re-raises an unhandled KeyboardInterrupt as SIGINT
    ),
    "SIGXFSZ over the file size limit": (
        ["/bin/sh", "-c", "exec head -c 8M /dev/zero > /tmp/big"],
        128 + signal.SIGXFSZ,
    ),
}


@pytest.mark.parametrize("argv, status", SIGNALS.values(), ids=SIGNALS.keys())
def test_the_program_dies_of_its_signals_like_a_host_process(argv, status):
    if argv[0] == "-c":
        argv = [sandbox_python(), "-I", "-S", *argv]
    result = run_sandboxed_sync(argv, limits=LIMITS)
    assert (result.returncode, result.timed_out) == (status, False), result.stderr[-300:]


def test_the_init_is_reaped_by_bwrap_not_left_to_the_host():
    """bubblewrap's own init (no --as-pid-1) outlived bwrap in 30 of 30 runs and was re-parented: to the host's
    pid 1, here to this test process (a child subreaper, see needs_sandbox)."""
    for _ in range(5):
        assert run_sandboxed_sync(["/bin/true"], limits=LIMITS).returncode == 0
        assert sandbox_processes() == []


# Tries every directory it can see (and new ones at /), filling each with up to 16 MiB in 1 MiB writes
# (files of at most RLIMIT_FSIZE), keeps what stuck and reports where and how much.
FILL_EVERYWHERE = """
import json, os
places, stored = {}, 0
dirs = ['/newdir']
for root, subdirs, _ in os.walk('/'):
    if root.startswith(('/proc', '/sys')):
        subdirs[:] = []
        continue
    dirs.append(root)
for directory in dirs:
    written = 0
    try:
        os.makedirs(directory, exist_ok=True)
        for number in range(16):
            with open(os.path.join(directory, f'fill{number}'), 'wb') as handle:
                for _ in range(4):
                    written += handle.write(b'x' * (1 << 20))
                    handle.flush()
    except OSError:
        pass
    for number in range(16):
        try:
            written_file = os.path.getsize(os.path.join(directory, f'fill{number}'))
        except OSError:
            continue
        places[directory] = places.get(directory, 0) + written_file
print(json.dumps(places))
"""


def test_only_the_capped_scratch_is_writable():
    """Whatever a program writes lives in host memory (tmpfs): only /tmp may take any, at most its cap.

    Before the root was read-only, bwrap's root tmpfs and /dev took any amount (200 MiB measured)."""
    # walking every directory took 9.4 s of a 10 s wall limit at load 8 (2 cores): the limit is not what is tested
    result = run_python(FILL_EVERYWHERE, SandboxLimits(wall_s=120, cpu_s=60, file_size_mb=4, tmp_size_mb=8))
    assert result.returncode == 0, result.stderr[-500:]
    places = json.loads(result.stdout)
    assert set(places) == {"/tmp"}, places
    assert 4 << 20 <= places["/tmp"] <= 8 << 20


# --- resource attacks: (code, what must be true of the result, seconds the call may take) --------------

RESOURCE_ATTACKS = {
    "infinite loop": ("while True: pass", lambda r: r.returncode != 0),
    "sleep forever": ("import time\ntime.sleep(1000)", lambda r: r.timed_out),
    "memory hog": ("x = bytearray(8 << 30)\nprint('ALLOCATED')", lambda r: b"MemoryError" in r.stderr),
    "fork bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        lambda r: r.returncode != 0,
    ),
    "huge file": (
        "f = open('/tmp/big', 'wb')\nfor _ in range(10_000):\n    f.write(b'x' * (1 << 20))",
        lambda r: b"File too large" in r.stderr,
    ),
    "fill /tmp": (
        "for i in range(100):\n    open(f'/tmp/f{i}', 'wb').write(b'x' * ((1 << 20) * 3))",
        lambda r: b"No space left" in r.stderr or b"File too large" in r.stderr,
    ),
    "1 GB of output": (
        "import sys\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))",
        lambda r: r.output_limited,
    ),
    "SIGTERM ignored": (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(1000)",
        lambda r: r.timed_out,
    ),
    "double-forked daemon": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(1000)\n    os._exit(0)\nprint('parent done')",
        lambda r: r.returncode == 0 and r.stdout == b"parent done\n",
    ),
}


@pytest.mark.parametrize("code, stopped", RESOURCE_ATTACKS.values(), ids=RESOURCE_ATTACKS.keys())
def test_resource_attacks_are_stopped_within_the_limit(code, stopped):
    started = time.monotonic()
    result = run_python(code)
    elapsed = time.monotonic() - started
    assert stopped(result), (result.returncode, result.stderr[-300:], result.flags)
    # the limit that stopped it is the one `stopped` names (flags from the sandbox, not a clock here); the
    # elapsed bound only catches a kill path that hangs: on a loaded 2-core machine a 3 s wall kill of a
    # fork bomb took 7.3 s end to end, so a tight bound here would measure the load, not the sandbox
    assert elapsed < LIMITS.wall_s + 30.0
    assert len(result.stdout) <= LIMITS.output_bytes


# --- the tests' leftover check (tests/helpers/sandbox.py) counts only its own run's sandboxes ---------

HOLD_A_SANDBOX = """
import sys
sys.path.insert(0, sys.argv[1])
from rewards.sandbox import SandboxLimits, python_argv, run_sandboxed_sync
files = {'/sandbox/main.py': b'import time\\ntime.sleep(60)'}
run_sandboxed_sync(python_argv('/sandbox/main.py'), files=files, limits=SandboxLimits(wall_s=60, cpu_s=60))
"""


def wait_for(condition, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def test_the_leftover_check_sees_only_its_own_runs_sandboxes_and_their_orphans():
    """A process holding a live sandbox stands for a concurrent test run: only its own check counts that
    sandbox (a sibling run's does not); once it dies, the orphans are re-parented to this run (a child
    subreaper), so a leak is still caught here rather than hidden under the host's pid 1."""
    other_run = subprocess.Popen([sys.executable, "-c", HOLD_A_SANDBOX, str(REPO)])
    sibling_run = subprocess.Popen(["sleep", "60"])
    try:

        def started(lines):  # bwrap, and the program it exec'd (until then bwrap's forks are named bwrap too)
            return any(" bwrap " in line for line in lines) and any("sandbox/main.py" in line for line in lines)

        theirs = wait_for(lambda: started(lines := sandbox_processes(root=other_run.pid)) and lines, 120)
        assert started(theirs), sandbox_processes(root=other_run.pid)
        assert sandbox_processes(root=sibling_run.pid) == []
        other_run.kill()  # the run dies without cleaning up: its sandbox is orphaned
        other_run.wait()
        orphans = wait_for(sandbox_processes, 60)  # reported (and, once they are zombies, reaped) here
        assert orphans and all(int(line.split()[0]) not in (other_run.pid, sibling_run.pid) for line in orphans)
    finally:
        for process in (other_run, sibling_run):
            process.kill()
            process.wait()
        for line in sandbox_processes():  # anything still alive: end it (the fixture then checks it is gone)
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
        wait_for(lambda: not sandbox_processes(), 10)
