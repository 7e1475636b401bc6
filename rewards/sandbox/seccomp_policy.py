"""The seccomp denylist every sandbox runs under, compiled once per process to BPF for ``bwrap --seccomp``.

A denylist on top of bubblewrap's namespaces: it removes the kernel surfaces an escape would need
(non-Unix sockets, new namespaces, mounts, tracing, eBPF, io_uring, keyrings, modules). Built with
libseccomp through ``pyseccomp`` (a ctypes binding), imported lazily so ``import rewards`` stays fast.
The sandbox's init (GNU ``timeout``, pid 1) runs under it too and needs none of these: fork (``clone``
without namespace flags), signal handlers, ``wait4`` and ``execve``.
"""

from __future__ import annotations

import errno
import functools
import os
import socket

# Syscalls that fail with EPERM whatever their arguments.
DENIED_SYSCALLS = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "syslog",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "adjtimex",
)

# clone() flags that would create a namespace (one rule per flag: libseccomp ORs rules).
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


class SeccompUnavailable(RuntimeError):
    """libseccomp or its Python binding is missing, so no filter can be built."""


@functools.cache
def seccomp_bpf() -> bytes:
    """The compiled filter (cached): what ``bwrap --seccomp FD`` reads."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: the binding loads libseccomp.so.2 at import
        raise SeccompUnavailable(
            f"cannot build the sandbox's seccomp filter ({exc}). Install the binding and the library: "
            "`pip install pyseccomp` and `apt-get install libseccomp2`."
        ) from exc
    deny = seccomp.ERRNO(errno.EPERM)
    policy = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            policy.add_rule(deny, name)
        except (OSError, RuntimeError, ValueError):
            continue  # a syscall this architecture does not have
    # Sockets: only AF_UNIX (Python's multiprocessing needs socketpair); no network of any kind.
    policy.add_rule(deny, "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    for flag in CLONE_NAMESPACE_FLAGS.values():
        policy.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory a filter cannot read: make libc fall back to clone().
    policy.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    memfd = os.memfd_create("verigrpo-seccomp")  # a file in memory: no pipe-buffer deadlock, nothing on disk
    try:
        with os.fdopen(os.dup(memfd), "wb") as sink:
            policy.export_bpf(sink)
        return os.pread(memfd, os.fstat(memfd).st_size, 0)
    finally:
        os.close(memfd)
