"""What ``verigrpo/bwrap`` chose where Inspect's conformance suite leaves it open (issue #43): a per-sample
``/tmp`` that persists like ``/work``, an ``/etc`` of its own (nothing of the host's), and which failures to
execute a command raise ``PermissionError``. Inspect's suite itself is tests/evals/test_sandbox_conformance.py."""

import asyncio
import os
import pwd

import pytest

from python_tool.inspect_sandbox import BwrapSandboxEnvironment

pytestmark = pytest.mark.usefixtures("needs_sandbox")


def with_samples(count, scenario):
    """Run ``scenario(*boxes)`` on ``count`` fresh sample sandboxes; returns its result and the samples' host roots."""

    async def main():
        made = [await BwrapSandboxEnvironment.sample_init("t", None, {}) for _ in range(count)]
        boxes = [environments["default"] for environments in made]
        try:
            return await scenario(*boxes), [box.root for box in boxes]
        finally:
            for environments in made:
                await BwrapSandboxEnvironment.sample_cleanup("t", None, environments, False)

    return asyncio.run(main())


def test_tmp_persists_across_execs_like_work_and_is_the_samples_own():
    async def scenario(box, other):
        await box.exec(["sh", "-c", "mkdir -p /tmp/d && echo kept > /tmp/d/f && echo kept > /work/f"])
        seen = (await box.exec(["cat", "/tmp/d/f", "/work/f"])).stdout
        owners = (await box.exec(["stat", "-c", "%u", "/tmp", "/work"])).stdout.split()
        in_other = await other.exec(["cat", "/tmp/d/f"])
        return seen, owners, in_other.returncode

    (seen, owners, other_status), roots = with_samples(2, scenario)
    assert seen == "kept\nkept\n"
    assert owners[0] == owners[1] != "0"
    assert other_status != 0  # another sample's /tmp is its own
    assert not any(os.path.exists(root) for root in roots)  # cleanup removed both directories


def test_etc_is_the_providers_own_and_names_the_sandbox_user():
    host_only = {entry.pw_name for entry in pwd.getpwall()} - {"root", "nobody", "sandbox"}

    async def scenario(box):
        passwd = await box.read_file("/etc/passwd")
        with pytest.raises(FileNotFoundError):
            await box.read_file("/etc/shadow")
        with pytest.raises(IsADirectoryError):
            await box.read_file("/etc")
        return passwd, (await box.exec(["whoami"])).stdout, sorted((await box.exec(["ls", "/etc"])).stdout.split())

    (passwd, whoami, listing), _ = with_samples(1, scenario)
    assert not any(f"\n{name}:" in f"\n{passwd}" for name in host_only), passwd
    assert whoami.strip() == ("nobody" if os.geteuid() == 0 else "sandbox")
    assert listing == ["group", "hostname", "hosts", "nsswitch.conf", "passwd"]


def test_a_command_that_cannot_be_executed_raises_permission_error_and_nothing_else_does():
    async def scenario(box):
        await box.write_file("script.sh", "#!/bin/sh\necho ran\n")
        for command in (["/etc/passwd"], ["./script.sh"], ["/work"]):
            with pytest.raises(PermissionError):
                await box.exec(command)
        await box.exec(["chmod", "+x", "script.sh"])
        runs = await box.exec(["./script.sh"])
        own_126 = await box.exec(
            ["sh", "-c", "echo 'prlimit: failed to execute bash: Permission denied' >&2; exit 126"]
        )
        missing = await box.exec(["no-such-program"])
        return runs.stdout, own_126.returncode, missing.returncode

    (ran, own_126, missing), _ = with_samples(1, scenario)
    assert ran == "ran\n"
    assert own_126 == 126  # its own exit status, and a message about another program: an ordinary result
    assert missing == 127  # a missing program is an ordinary result, as with docker
