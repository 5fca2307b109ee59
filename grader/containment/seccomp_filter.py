"""The seccomp filter of the sandbox, built with libseccomp (the C library every Linux
distribution ships), through its own Python binding where the grading Python has it, else
through pyseccomp (a dependency: the same API over the same library, by ctypes).

Standalone on purpose (imports nothing of the grader): when neither imports here,
grader/containment/sandbox.py runs this file with the system's python3, which writes the BPF
program to stdout.
"""

from __future__ import annotations

import errno
import sys
import tempfile

DENIED = (
    # another process's memory, or tracing it
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # the kernel's attack surface a kernel exercise never needs
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    # leaving or rearranging the namespaces bubblewrap made
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "personality",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
)


def program() -> bytes:
    """Allow everything but DENIED, which fails with EPERM (not a kill: a library probing a
    syscall gets an error it can handle, and the submission gets a normal verdict)."""
    try:
        import seccomp  # libseccomp's own binding (Debian/Ubuntu python3-seccomp)
    except ImportError:  # the same API over the same C library, through ctypes (pip: pyseccomp)
        import pyseccomp as seccomp

    flt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        try:
            flt.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):  # unknown to this kernel's libseccomp
            pass
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0)
        return fh.read()


if __name__ == "__main__":
    sys.stdout.buffer.write(program())
