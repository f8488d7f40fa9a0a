"""After `agent config key clear` (or `agent forget`) no copy of the key stays in the device's
RAM: the writable memory of the simulator's (or native_sim's) process is searched for it.

The key passes through the console (on the firmware the serial shell's receive ring buffer),
the hidden prompt, the settings store (its file buffers and littlefs's caches), the request
worker (its copy for the request, the HTTP head with the Authorization line) and the network
stream; docs/configuration.md, "What happens to the key in RAM", lists them. Reading another
process's memory needs root or ptrace rights over it, as the tests have.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Script, TestServer, text_reply
from test_ask import ask

# Random-looking, so that no 8-byte piece of it turns up in memory by chance, and long, as
# provider keys often are (164 bytes): it spans many of the console's input chunks (16 bytes
# on the firmware) and so every place a chunk passes.
KEY = b"sk-proj-WIPE-" + b"".join(
    hashlib.sha256(b"test_key_wipe %d" % i).hexdigest().encode() for i in range(3))[:151]
# A value that stays in RAM (the live configuration): proves that the search sees it.
MODEL = "m-PROBE-8d2c41f07e9b3a65"
KEY_PROMPT = b"API key (hidden; Enter saves, Esc cancels): "
PIECE = 8  # any copy of 8 bytes or more of the key holds one of its pieces


def pieces(secret: bytes) -> list[bytes]:
    """Every @PIECE-byte substring of @secret, at every offset: a copy of any part of it that
    long is found, however it lies against the start of the key."""
    return sorted({secret[i:i + PIECE] for i in range(len(secret) - PIECE + 1)})


CHUNK = 16 << 20
# Larger mappings are the sanitizers' shadow (metadata, terabytes reserved): no data there.
SHADOW_BYTES = 64 << 30


def writable_memory_hits(pid: int, needles: list[bytes]) -> list[str]:
    """Where any of @needles occurs in the private writable mappings of process @pid: its RAM.
    Shared mappings are files, not RAM: native_sim maps its flash image so, and the flash keeps
    superseded settings records (docs/configuration.md, "What happens to the key in flash")."""
    pattern = re.compile(b"|".join(re.escape(n) for n in needles))
    overlap = max(len(n) for n in needles) - 1
    hits: list[str] = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if fields[1] != "rw-p" or hi - lo > SHADOW_BYTES:
                continue
            name = fields[5] if len(fields) > 5 else "anonymous"
            tail = b""
            for at in range(lo, hi, CHUNK):
                try:
                    mem.seek(at)
                    data = tail + mem.read(min(CHUNK, hi - at))
                except OSError:
                    break  # not backed (guard pages)
                for match in pattern.finditer(data):
                    where = at - len(tail) + match.start()
                    hits.append(f"{where:#x} in {name}: {match.group()!r}")
                tail = data[-overlap:]
    return hits


# A process holding @length bytes read from stdin until stdin closes.
HOLDER = ("import sys; held = bytearray(sys.stdin.buffer.read(int(sys.argv[1])));"
          " print('held', flush=True); sys.stdin.buffer.read()")


@pytest.mark.parametrize("start, length, found", [
    (1, PIECE - 1, False),  # shorter than a piece: not the key's as far as the search goes
    (1, PIECE, True),       # one piece, off any alignment to the key's start
    (1, 2 * PIECE - 2, True),  # 14 bytes: holds no piece aligned to the key's start
    (len(KEY) - PIECE, PIECE, True),  # the key's last bytes
])
def test_the_search_finds_any_piece_of_the_key(start: int, length: int, found: bool) -> None:
    """The search itself, on a process that holds only KEY[start:start + length]."""
    held = KEY[start:start + length]
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(length)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(held)
        proc.stdin.flush()
        assert proc.stdout.readline() == b"held\n"
        hits = writable_memory_hits(proc.pid, pieces(KEY))
        proc.stdin.close()
    assert bool(hits) == found, hits


def enter_key(dut: SimDevice, key: bytes) -> None:
    """The hidden prompt, the key pasted in one write (so it passes the console's input
    buffer whole)."""
    mark = len(dut.transcript)
    dut.write(b"agent config key\r")
    dut.read_until(KEY_PROMPT, start=mark)
    dut.write(key + b"\r")
    dut.read_until(b"key set\r\n" + PROMPT, start=mark)


@pytest.mark.needs_raw_console("types the key at the hidden prompt, which does not end its line")
@pytest.mark.parametrize("erase, done", [("agent config key clear", "key cleared"),
                                         ("agent forget", "agent configuration erased")])
def test_erased_key_leaves_no_copy_in_memory(sims, erase: str, done: str) -> None:
    with TestServer(Script.repeat(text_reply("chat", "hello there"))) as srv:
        dut = sims.start()
        assert dut.proc is not None
        url = srv.url("/v1/chat/completions")
        assert dut.exec_command(f"agent config endpoint {url}")[0].startswith("endpoint set")
        assert dut.exec_command(f"agent config model {MODEL}") == [f"model set to {MODEL}"]
        enter_key(dut, KEY)
        assert "hello there" in ask(dut, "hi")
        assert srv.wait_for_requests(1)[0].authorization == "Bearer " + KEY.decode()
        pid = dut.proc.pid
        assert writable_memory_hits(pid, [MODEL.encode()]), "the search finds nothing at all"

        assert dut.exec_command(erase) == [done]
        assert dut.exec_command("agent status")[4] == "key:       not set"
        assert writable_memory_hits(pid, pieces(KEY)) == []
