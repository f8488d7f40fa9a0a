"""The test server signing with an existing CA (the one a firmware image was built to trust):
agent_host.testserver.tls.write_ca / CaFiles, TestServer(tls_ca=...), and the command line's
--make-ca, --ca-cert and --ca-key."""

from __future__ import annotations

import argparse
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import Script, TestServer, fixture_reply
from agent_host.testserver.command import add_arguments, ca_files
from agent_host.testserver.tls import CaFiles, make_tls, write_ca
from cryptography import x509

REPLY = "chat/openai_gpt4o_finish_length.sse"


def handshake(ca_pem: Path, port: int, host: str) -> None:
    """A TLS handshake with 127.0.0.1:port as @host, trusting @ca_pem only."""
    ctx = ssl.create_default_context(cafile=str(ca_pem))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            ctx.wrap_socket(raw, server_hostname=host):
        pass


def issuer_of(cert_pem: Path) -> x509.Name:
    return x509.load_pem_x509_certificate(cert_pem.read_bytes()).issuer


def subject_of(cert_pem: Path) -> x509.Name:
    return x509.load_pem_x509_certificate(cert_pem.read_bytes()).subject


def test_write_ca_writes_a_root_and_its_key(tmp_path: Path) -> None:
    files = write_ca(tmp_path / "ca")
    assert files == CaFiles(tmp_path / "ca" / "ca.pem", tmp_path / "ca" / "ca-key.pem")
    assert files.cert_pem.read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert "PRIVATE KEY-----" in files.key_pem.read_text()
    assert issuer_of(files.cert_pem) == subject_of(files.cert_pem)  # a root
    assert CaFiles.in_directory(tmp_path / "ca") == files


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_a_server_with_the_given_ca_is_trusted_with_that_ca(tmp_path: Path, host: str) -> None:
    ca = write_ca(tmp_path / "ca")
    before = ca.cert_pem.read_bytes()
    with TestServer(Script.repeat(fixture_reply(REPLY)), tls="valid", tls_ca=ca,
                    tls_dir=tmp_path / "tls") as srv:
        assert srv.ca_pem == ca.cert_pem
        assert srv.tls is not None
        assert issuer_of(srv.tls.cert_pem) == subject_of(ca.cert_pem)
        handshake(ca.cert_pem, srv.port, host)
    assert ca.cert_pem.read_bytes() == before  # the given CA is left as it was
    assert not (tmp_path / "tls" / "ca.pem").exists()


def test_two_servers_with_the_same_ca_are_trusted_by_one_file(tmp_path: Path) -> None:
    ca = write_ca(tmp_path / "ca")
    for _ in range(2):
        with TestServer(Script.repeat(fixture_reply(REPLY)), tls="valid", tls_ca=ca) as srv:
            handshake(ca.cert_pem, srv.port, "localhost")


@pytest.mark.parametrize(("mode", "reason"), [("wrong-host", "Hostname mismatch"),
                                               ("unknown-ca", "unable to get local issuer")])
def test_wrong_host_and_unknown_ca_with_the_given_ca(tmp_path: Path, mode: str,
                                                     reason: str) -> None:
    ca = write_ca(tmp_path / "ca")
    with TestServer(Script.repeat(fixture_reply(REPLY)), tls=mode,  # type: ignore[arg-type]
                    tls_ca=ca) as srv:
        assert srv.ca_pem == ca.cert_pem
        assert srv.tls is not None
        signed_by_ca = issuer_of(srv.tls.cert_pem) == subject_of(ca.cert_pem)
        assert signed_by_ca is (mode == "wrong-host")
        with pytest.raises(ssl.SSLCertVerificationError, match=reason):
            handshake(ca.cert_pem, srv.port, "localhost")
        assert srv.wait_for_tls_error()


def test_a_key_that_is_not_the_certificates_is_refused(tmp_path: Path) -> None:
    one = write_ca(tmp_path / "one")
    two = write_ca(tmp_path / "two")
    with pytest.raises(TestServerError, match="is not the key of"):
        make_tls("valid", tmp_path / "tls", CaFiles(one.cert_pem, two.key_pem))


def test_missing_and_unreadable_ca_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TestServerError, match="cannot read the CA"):
        make_tls("valid", tmp_path / "tls", CaFiles.in_directory(tmp_path / "none"))
    ca = write_ca(tmp_path / "ca")
    with pytest.raises(TestServerError, match="not a PEM certificate and its key"):
        make_tls("valid", tmp_path / "tls", CaFiles(ca.key_pem, ca.key_pem))


def test_tls_ca_needs_a_tls_mode(tmp_path: Path) -> None:
    with pytest.raises(TestServerError, match="tls_ca needs a TLS mode"):
        TestServer(tls_ca=write_ca(tmp_path / "ca"))


# -- command line ------------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_make_ca_then_serve_with_it(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agent_host.testserver", "--make-ca", str(tmp_path / "ca")],
        capture_output=True, text=True, timeout=60, check=True).stdout
    files = CaFiles.in_directory(tmp_path / "ca")
    assert out == f"CA certificate: {files.cert_pem}\nCA key: {files.key_pem}\n"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_host.testserver", "--duration", "60", "--quiet",
         "--synth", "http503_retry_after", "--tls", "--ca-cert", str(files.cert_pem),
         "--ca-key", str(files.key_pem)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        port = int(first.split(":")[2].split("/")[0])
        assert proc.stdout.readline() == f"CA certificate: {files.cert_pem} (TLS mode valid)\n"
        handshake(files.cert_pem, port, "localhost")
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


@pytest.mark.parametrize(("argv", "message"), [
    (["--tls", "--ca-cert", "a.pem"], "--ca-cert and --ca-key go together"),
    (["--tls", "--ca-key", "k.pem"], "--ca-cert and --ca-key go together"),
    (["--ca-cert", "a.pem", "--ca-key", "k.pem"], "need --tls"),
])
def test_ca_options_errors(argv: list[str], message: str) -> None:
    with pytest.raises(TestServerError, match=message):
        ca_files(parse(argv))


def test_ca_options_give_the_files() -> None:
    args = parse(["--tls", "wrong-host", "--ca-cert", "a.pem", "--ca-key", "k.pem"])
    assert ca_files(args) == CaFiles(Path("a.pem"), Path("k.pem"))
    assert ca_files(parse(["--tls"])) is None
