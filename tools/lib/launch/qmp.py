# SPDX-License-Identifier: MIT
"""QEMU's machine protocol (QMP) over a unix socket: the few commands the
tools send (cont, quit), and what a guest that stopped making progress
was doing when its time ran out: each vCPU's RIP and halt state, as QEMU
reads them, beside its host thread's scheduler state and wait channel,
as the host kernel does (proc(5): /proc/PID/task/TID/stat, wchan)."""

import json
import re
import socket
import time
from pathlib import Path
from typing import Any

WAIT_S = 20
# Reading registers stops each vCPU; a vCPU stuck inside KVM_RUN never
# stops, and QEMU never answers: a short bound says so.
REGISTERS_WAIT_S = 5
PROC = Path("/proc")


class QMPError(Exception):
    pass


def qmp(path, *commands, wait_s=WAIT_S) -> list[Any]:
    """Send QMP commands (after the capabilities handshake) to the
    socket at path: each a name, or (name, arguments). The replies'
    "return" values, in order."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(wait_s)
            sock.connect(str(path))
            break
        except OSError as err:
            sock.close()
            if time.monotonic() > deadline:
                raise QMPError(f"cannot reach QEMU's QMP socket: {err}") \
                    from None
            time.sleep(0.05)
    replies = []
    with sock, sock.makefile("rw", encoding="utf-8") as f:
        def reply() -> Any:
            while True:
                line = f.readline()
                if not line:
                    raise QMPError("QEMU closed its QMP socket")
                msg = json.loads(line)
                if "error" in msg:
                    raise QMPError(f"QMP: {msg['error'].get('desc')}")
                if "return" in msg:
                    return msg["return"]
                # greetings and events come in between
        try:
            f.readline()                    # the greeting
            for command in ("qmp_capabilities", *commands):
                name, arguments = (command, None) if isinstance(command, str) \
                    else command
                request: dict[str, Any] = {"execute": name}
                if arguments:
                    request["arguments"] = arguments
                f.write(json.dumps(request) + "\n")
                f.flush()
                replies.append(reply())
        except (OSError, ValueError) as err:
            raise QMPError(f"QMP: {err}") from None
    return replies[1:]


# "info registers -a": a "CPU#n" line, then its registers; the RIP line
# (EIP outside long mode) ends with the halt state (QEMU's target/i386
# x86_cpu_dump_state()).
_CPU = re.compile(r"^CPU#(\d+)", re.MULTILINE)
_RIP = re.compile(r"[RE]IP=([0-9a-f]+)\b.*?\bHLT=(\d)")


def registers(text) -> dict[int, tuple[str, bool]]:
    """{vCPU: (RIP, halted)} from "info registers -a"."""
    out = {}
    starts = list(_CPU.finditer(text))
    for m, after in zip(starts, starts[1:] + [None]):
        block = text[m.end():after.start() if after else len(text)]
        rip = _RIP.search(block)
        if rip:
            out[int(m.group(1))] = (rip.group(1), rip.group(2) == "1")
    return out


def thread_state(pid, tid, proc=None) -> str:
    """A host thread's scheduler state and, where it sleeps, in what
    kernel function ("R", "S in kvm_vcpu_block"); "gone" once it ended."""
    task = Path(proc or PROC) / str(pid) / "task" / str(tid)
    try:
        state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"
    try:
        wchan = (task / "wchan").read_text().strip()
    except OSError:
        wchan = ""
    return f"{state} in {wchan}" if wchan and wchan != "0" else state


def vcpus(path, pid, proc=None) -> list[str]:
    """One line per vCPU of the QEMU (pid) behind the QMP socket at path:
    its host thread's state, then its RIP and whether it halted, or why
    QEMU could not say."""
    try:
        cpus, = qmp(path, "query-cpus-fast", wait_s=REGISTERS_WAIT_S)
    except QMPError as err:
        return [f"no vCPU list ({err})"]
    threads = {c["cpu-index"]: c.get("thread-id") for c in cpus}
    try:
        text, = qmp(path, ("human-monitor-command",
                           {"command-line": "info registers -a"}),
                    wait_s=REGISTERS_WAIT_S)
        regs = registers(text)
        unread = "QEMU gave no registers"
    except QMPError as err:
        regs = {}
        unread = f"registers not read in {REGISTERS_WAIT_S} s, a vCPU " \
            f"that never leaves KVM_RUN ({err})" if "timed out" in str(err) \
            else f"registers not read ({err})"
    lines = []
    for index, tid in sorted(threads.items()):
        host = thread_state(pid, tid, proc) if tid else "no thread id"
        if index in regs:
            rip, halted = regs[index]
            said = f"RIP {rip}, {'halted' if halted else 'running'}"
        else:
            said = unread
        lines.append(f"vCPU {index}: thread {tid} {host}; {said}")
    return lines
