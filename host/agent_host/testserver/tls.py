"""Certificates for the HTTPS test server, made with `trustme` (a throwaway local CA).

Modes:
    valid: the server certificate names `localhost` and `127.0.0.1` and is signed by the CA
        whose PEM the server exposes (`ca_pem`): a client that trusts `ca_pem` must accept it.
    wrong-host: signed by that CA but issued for `wrong-host.invalid` only: a client that
        checks the host name must refuse it.
    unknown-ca: names `localhost` and `127.0.0.1` but is signed by a second CA that `ca_pem`
        is not: a client that checks the chain must refuse it.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import TestServerError

TlsMode = Literal["valid", "wrong-host", "unknown-ca"]

TLS_MODES: tuple[TlsMode, ...] = ("valid", "wrong-host", "unknown-ca")

#: The names the valid certificate covers.
GOOD_NAMES = ("localhost", "127.0.0.1")

#: The only name the wrong-host certificate covers (.invalid never resolves).
WRONG_NAME = "wrong-host.invalid"


@dataclass(frozen=True)
class TlsMaterial:
    """Files of one server's TLS setup.

    Attributes:
        mode: The mode.
        ca_pem: The CA a client should be told to trust.
        cert_pem: The server's certificate chain (leaf first).
        key_pem: The server's private key.
    """

    mode: TlsMode
    ca_pem: Path
    cert_pem: Path
    key_pem: Path

    def server_context(self) -> ssl.SSLContext:
        """An SSL context for the server side (TLS 1.2 or later).

        Returns:
            The context.
        """
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.cert_pem, self.key_pem)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """An SSL context for a Python client that trusts `ca_pem` only (chain and host checked).

        Returns:
            The context.
        """
        return ssl.create_default_context(cafile=str(self.ca_pem))


def make_tls(mode: TlsMode, directory: Path) -> TlsMaterial:
    """Create a CA and a server certificate for `mode` and write them to `directory`.

    Args:
        mode: "valid", "wrong-host" or "unknown-ca".
        directory: Where to write ca.pem, server-cert.pem and server-key.pem.

    Returns:
        The file paths.

    Raises:
        TestServerError: Unknown mode, or `trustme` is not installed.
    """
    if mode not in TLS_MODES:
        raise TestServerError(f"TLS mode must be one of {TLS_MODES}, not {mode!r}")
    try:
        import trustme
    except ImportError:  # pragma: no cover - depends on the environment
        raise TestServerError(
            "HTTPS needs the trustme package: pip install 'zephyr-agent-host[test]'"
        ) from None
    ca = trustme.CA()
    if mode == "valid":
        leaf = ca.issue_cert(*GOOD_NAMES)
    elif mode == "wrong-host":
        leaf = ca.issue_cert(WRONG_NAME)
    else:
        leaf = trustme.CA().issue_cert(*GOOD_NAMES)
    directory.mkdir(parents=True, exist_ok=True)
    material = TlsMaterial(
        mode, directory / "ca.pem", directory / "server-cert.pem", directory / "server-key.pem"
    )
    ca.cert_pem.write_to_path(str(material.ca_pem))
    leaf.private_key_pem.write_to_path(str(material.key_pem))
    with material.cert_pem.open("wb") as out:
        for blob in leaf.cert_chain_pems:
            out.write(blob.bytes())
    return material
