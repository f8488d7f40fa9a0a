"""TLS of the POSIX port's network stream against a Python `ssl` server on 127.0.0.1.

The certificates come from `trustme`; tests/unit/net_probe (built with the simulator, ASan and
UBSan) connects with agent_net_connect() and reports each result, see its header. The probe
trusts only the compiled-in bundle and the CA file it is given, never the host's store, so
every "refused" case below would pass through if verification were off. It also reports the
simulated internal heap, from which OpenSSL allocates a TLS connection's memory
(docs/simulator.md, "Simulated heap").
"""

from __future__ import annotations

import datetime
import errno
import os
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme

Handler = Callable[[socket.socket], None]


@pytest.fixture(scope="session")
def net_probe(sim_exe: Path) -> Path:
    exe = sim_exe.parent / "tests" / "unit" / "net_probe"
    assert exe.is_file(), f"{exe} was not built"
    return exe


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


class Server:
    """Accepts one connection on 127.0.0.1 and hands it to a handler on a thread."""

    def __init__(self, handler: Handler) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(10)
        self.port: int = self.listener.getsockname()[1]
        self.handler = handler
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError as exc:
            self.error = exc
            return
        with conn:
            conn.settimeout(10)
            try:
                self.handler(conn)
            except (OSError, ssl.SSLError) as exc:
                self.error = exc


@contextmanager
def serve(handler: Handler) -> Iterator[Server]:
    server = Server(handler)
    server.thread.start()
    try:
        yield server
    finally:
        server.thread.join(timeout=15)
        server.listener.close()
        assert not server.thread.is_alive()


def tls_handler(
    leaf: trustme.LeafCert,
    reply: Callable[[bytes], bytes] = lambda line: b"echo:" + line,
    close_notify: bool = True,
) -> Handler:
    """Handshake, read one line, send the reply, then end with or without close_notify."""

    def handle(conn: socket.socket) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        leaf.configure_cert(ctx)
        tls = ctx.wrap_socket(conn, server_side=True)
        line = b""
        while not line.endswith(b"\n"):
            chunk = tls.recv(4096)
            if not chunk:
                break
            line += chunk
        tls.sendall(reply(line))
        if close_notify:
            tls.unwrap()
        else:
            tls.close()

    return handle


def run_probe(
    probe: Path,
    host: str,
    port: int,
    tls: bool,
    ca_path: Path | None,
    request: str = "hello\n",
    chunk: int | None = None,
    heap_left: int | None = None,
) -> dict[str, str]:
    args = [str(probe), host, str(port), "1" if tls else "0", str(ca_path) if ca_path else "-"]
    args.append(request)
    if chunk is not None:
        args.append(str(chunk))
    env = dict(os.environ)
    if heap_left is not None:
        env["NET_PROBE_HEAP_LEFT"] = str(heap_left)
    result = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert "Sanitizer" not in result.stderr and "runtime error" not in result.stderr
    out: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out


def test_trusted_ca_name_and_close_notify(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    with serve(tls_handler(ca.issue_cert("localhost"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert server.error is None
    assert out["ca"] == "1"
    assert out["connect"] == "0"
    assert out["send"] == "0"
    assert bytes.fromhex(out["payload"]) == b"echo:hello\n"
    assert out["end"] == "0"


def test_end_without_close_notify_reads_as_orderly_end(
    net_probe: Path, ca: trustme.CA, ca_file: Path
) -> None:
    handler = tls_handler(ca.issue_cert("localhost"), close_notify=False)
    with serve(handler) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert bytes.fromhex(out["payload"]) == b"echo:hello\n"
    assert out["end"] == "0"


def test_without_the_ca_file_the_server_is_refused(net_probe: Path, ca: trustme.CA) -> None:
    with serve(tls_handler(ca.issue_cert("localhost"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, None)
    assert out["connect"] == str(-errno.EACCES)
    assert "send" not in out
    # The client rejected the chain: the server saw an alert, not a finished handshake.
    assert isinstance(server.error, ssl.SSLError)


def test_certificate_for_another_name_is_refused(
    net_probe: Path, ca: trustme.CA, ca_file: Path
) -> None:
    with serve(tls_handler(ca.issue_cert("other.test"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == str(-errno.EACCES)


def test_certificate_from_another_ca_is_refused(net_probe: Path, ca_file: Path) -> None:
    stranger = trustme.CA()
    with serve(tls_handler(stranger.issue_cert("localhost"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == str(-errno.EACCES)


def test_expired_certificate_is_refused(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    leaf = ca.issue_cert(
        "localhost",
        not_before=now - datetime.timedelta(days=10),
        not_after=now - datetime.timedelta(days=1),
    )
    with serve(tls_handler(leaf)) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == str(-errno.EACCES)


def test_ip_literal_matches_ip_san(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    with serve(tls_handler(ca.issue_cert("127.0.0.1"))) as server:
        out = run_probe(net_probe, "127.0.0.1", server.port, True, ca_file)
    assert out["connect"] == "0"
    assert bytes.fromhex(out["payload"]) == b"echo:hello\n"


def test_ip_literal_needs_an_ip_san(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    # A certificate naming only "localhost" does not vouch for the address 127.0.0.1.
    with serve(tls_handler(ca.issue_cert("localhost"))) as server:
        out = run_probe(net_probe, "127.0.0.1", server.port, True, ca_file)
    assert out["connect"] == str(-errno.EACCES)


def test_name_does_not_match_an_ip_san(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    with serve(tls_handler(ca.issue_cert("127.0.0.1"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == str(-errno.EACCES)


def test_chain_through_an_intermediate(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    intermediate = ca.create_child_ca()
    leaf = intermediate.issue_cert("localhost", key_type=trustme.KeyType.RSA)
    with serve(tls_handler(leaf)) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == "0"
    assert bytes.fromhex(out["payload"]) == b"echo:hello\n"


def test_trusting_only_the_intermediate_is_not_enough(
    net_probe: Path, ca: trustme.CA, tmp_path: Path
) -> None:
    # Trust anchors are roots: an intermediate alone in the store does not verify a chain.
    intermediate = ca.create_child_ca()
    path = tmp_path / "intermediate.pem"
    intermediate.cert_pem.write_to_path(str(path))
    with serve(tls_handler(intermediate.issue_cert("localhost"))) as server:
        out = run_probe(net_probe, "localhost", server.port, True, path)
    assert out["connect"] == str(-errno.EACCES)


def test_server_closing_mid_handshake_is_a_tls_failure(net_probe: Path, ca_file: Path) -> None:
    def cut(conn: socket.socket) -> None:
        conn.recv(10)  # part of the ClientHello

    with serve(cut) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file)
    assert out["connect"] == str(-errno.ECONNABORTED)


def test_large_response_in_small_reads(net_probe: Path, ca: trustme.CA, ca_file: Path) -> None:
    body = bytes((i * 7 + (i >> 9)) & 0xFF for i in range(1 << 20))
    leaf = ca.issue_cert("localhost")
    with serve(tls_handler(leaf, reply=lambda _line: body)) as server:
        # 100-byte reads: most come from records OpenSSL already holds, not from the socket.
        out = run_probe(net_probe, "localhost", server.port, True, ca_file, chunk=100)
    assert out["connect"] == "0"
    assert bytes.fromhex(out["payload"]) == body
    assert out["end"] == "0"


def test_plain_tcp_to_the_same_kind_of_server(net_probe: Path) -> None:
    def echo(conn: socket.socket) -> None:
        conn.sendall(b"plain:" + conn.recv(100))

    with serve(echo) as server:
        out = run_probe(net_probe, "127.0.0.1", server.port, False, None)
    assert out["connect"] == "0"
    assert bytes.fromhex(out["payload"]) == b"plain:hello\n"
    assert out["end"] == "0"


def test_ca_file_errors(net_probe: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    out = run_probe(net_probe, "127.0.0.1", 9, False, missing)
    assert out["ca"] == str(-errno.ENOENT)
    key_only = tmp_path / "key.pem"
    trustme.CA().private_key_pem.write_to_path(str(key_only))
    out = run_probe(net_probe, "127.0.0.1", 9, False, key_only)
    assert out["ca"] == str(-errno.EINVAL)


@dataclass
class HeapUse:
    """The probe's `heap` line: the simulated internal heap around one connection."""

    before: int  # free before connecting
    lowest: int  # the lowest free while the connection was open and received
    peak: int  # the most allocated at once (the handshake, for TLS)
    after: int  # free after closing

    @property
    def open_bytes(self) -> int:
        return self.before - self.lowest

    @property
    def kept(self) -> int:
        return self.before - self.after


def heap_use(out: dict[str, str]) -> HeapUse:
    return HeapUse(*(int(x) for x in out["heap"].split()))


def test_tls_memory_comes_from_the_simulated_heap(
    net_probe: Path, ca: trustme.CA, ca_file: Path
) -> None:
    """OpenSSL takes a TLS connection's memory from the simulated heap: what it really uses,
    which depends on the connection, not a figure of the port; plain TCP takes none."""
    uses = {}
    leaves = {"ec": ca.issue_cert("localhost"),
              "rsa_chain": ca.create_child_ca().issue_cert("localhost",
                                                          key_type=trustme.KeyType.RSA)}
    for name, leaf in leaves.items():
        with serve(tls_handler(leaf)) as server:
            out = run_probe(net_probe, "localhost", server.port, True, ca_file)
        assert out["connect"] == "0" and bytes.fromhex(out["payload"]) == b"echo:hello\n"
        use = uses[name] = heap_use(out)
        # Open, at least OpenSSL's two record buffers (16 KiB of content each); the handshake
        # took more; closing gives the connection's memory back, and the first connection
        # leaves the library's caches (algorithm lookups) behind, less than it held.
        assert use.open_bytes >= 32 * 1024, use
        assert use.peak > use.open_bytes, use
        assert 0 < use.kept < use.open_bytes, use
    # A server sending an RSA key and an intermediate: more to verify and to keep.
    assert uses["rsa_chain"].open_bytes > uses["ec"].open_bytes, uses
    assert uses["rsa_chain"].peak > uses["ec"].peak, uses

    def echo(conn: socket.socket) -> None:
        conn.sendall(b"plain:" + conn.recv(100))

    with serve(echo) as server:
        out = run_probe(net_probe, "127.0.0.1", server.port, False, None)
    assert out["connect"] == "0"
    plain = heap_use(out)
    assert plain.before == plain.lowest == plain.after and plain.peak == 0, plain


def test_heap_too_small_for_tls_fails_cleanly(
    net_probe: Path, ca: trustme.CA, ca_file: Path
) -> None:
    """Too little heap for a TLS connection: -ENOMEM (no crash, no sanitizer report, nothing
    sent), at every stage of the handshake; with what it needs (and a margin for the sizes
    that vary) it connects."""
    leaf = ca.issue_cert("localhost")
    with serve(tls_handler(leaf)) as server:
        full = heap_use(run_probe(net_probe, "localhost", server.port, True, ca_file))
    need = full.peak
    for left in (0, 16, 4096, need // 4, need // 2, need * 3 // 4, need - 16 * 1024):
        left -= left % 16
        with serve(tls_handler(leaf)) as server:
            out = run_probe(net_probe, "localhost", server.port, True, ca_file,
                            heap_left=left)
        assert out["connect"] == str(-errno.ENOMEM), (left, out)
        assert "payload" not in out
        use = heap_use(out)
        assert use.before == left
        # What stays is the library's caches filled so far (a failure's error records make
        # it a few bytes more than a success leaves), never the connection's memory.
        assert 0 <= use.kept <= full.kept + 1024, (left, use, full)
    left = need + 4096
    with serve(tls_handler(leaf)) as server:
        out = run_probe(net_probe, "localhost", server.port, True, ca_file, heap_left=left)
    assert out["connect"] == "0", out
    assert bytes.fromhex(out["payload"]) == b"echo:hello\n"
