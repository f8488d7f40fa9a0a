"""Certificates for the HTTPS test server, made with `trustme` (a throwaway local CA).

Modes:
    valid: the server certificate names `localhost` and `127.0.0.1` and is signed by the CA
        whose PEM the server exposes (`ca_pem`): a client that trusts `ca_pem` must accept it.
    wrong-host: signed by that CA but issued for `wrong-host.invalid` only: a client that
        checks the host name must refuse it.
    unknown-ca: names `localhost` and `127.0.0.1` but is signed by a second CA that `ca_pem`
        is not: a client that checks the chain must refuse it.

The CA is new for every server unless an existing one is given (:class:`CaFiles`, made once
with :func:`write_ca`): a firmware image has its trusted roots compiled in, so the server must
sign with the CA that the image was built with (the CMake option AGENT_EXTRA_CA, docs/tls.md).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import TestServerError

if TYPE_CHECKING:
    import trustme

TlsMode = Literal["valid", "wrong-host", "unknown-ca"]

TLS_MODES: tuple[TlsMode, ...] = ("valid", "wrong-host", "unknown-ca")

#: The names the valid certificate covers.
GOOD_NAMES = ("localhost", "127.0.0.1")

#: The only name the wrong-host certificate covers (.invalid never resolves).
WRONG_NAME = "wrong-host.invalid"


#: File names :func:`write_ca` uses in its directory.
CA_CERT_NAME = "ca.pem"
CA_KEY_NAME = "ca-key.pem"


@dataclass(frozen=True)
class CaFiles:
    """An existing CA, as PEM files, for the server to sign its certificates with.

    Attributes:
        cert_pem: The CA's certificate (the root a client trusts).
        key_pem: The CA's private key (unencrypted).
    """

    cert_pem: Path
    key_pem: Path

    @classmethod
    def in_directory(cls, directory: Path) -> CaFiles:
        """The files :func:`write_ca` writes into @directory (they may not exist yet)."""
        return cls(directory / CA_CERT_NAME, directory / CA_KEY_NAME)


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


def _need_trustme() -> None:
    try:
        import trustme  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        raise TestServerError(
            "HTTPS needs the trustme package: pip install 'zephyr-agent-host[test]'"
        ) from None


def write_ca(directory: Path) -> CaFiles:
    """Create a new CA and write its certificate and key to @directory.

    Args:
        directory: Where to write ca.pem and ca-key.pem (created if missing).

    Returns:
        The file paths.

    Raises:
        TestServerError: `trustme` is not installed.
    """
    _need_trustme()
    import trustme

    ca = trustme.CA()
    files = CaFiles.in_directory(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ca.private_key_pem.write_to_path(str(files.key_pem))
    ca.cert_pem.write_to_path(str(files.cert_pem))
    return files


def _load_ca(ca: CaFiles) -> trustme.CA:
    import trustme
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = ca.cert_pem.read_bytes()
        key = ca.key_pem.read_bytes()
    except OSError as err:
        raise TestServerError(f"cannot read the CA: {err}") from None
    try:
        loaded = trustme.CA.from_pem(cert, key)
        # from_pem() takes any pair; a key that is not the certificate's would sign server
        # certificates that no client can verify, so it is refused here.
        public = serialization.load_pem_private_key(key, password=None).public_key()
        cert_public = x509.load_pem_x509_certificate(cert).public_key()
    except (ValueError, TypeError) as err:
        raise TestServerError(
            f"{ca.cert_pem}, {ca.key_pem}: not a PEM certificate and its key ({err})"
        ) from None
    spki = serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    if public.public_bytes(*spki) != cert_public.public_bytes(*spki):
        raise TestServerError(f"{ca.key_pem} is not the key of {ca.cert_pem}")
    return loaded


def make_tls(mode: TlsMode, directory: Path, ca: CaFiles | None = None) -> TlsMaterial:
    """Create a server certificate for `mode` (and a CA unless one is given); write them.

    Args:
        mode: "valid", "wrong-host" or "unknown-ca".
        directory: Where to write server-cert.pem, server-key.pem and (without @ca) ca.pem.
        ca: An existing CA to sign with instead of a new one; it is then the `ca_pem` of the
            result, for every mode ("unknown-ca" signs with a second, new CA as always).

    Returns:
        The file paths.

    Raises:
        TestServerError: Unknown mode, `trustme` is not installed, or @ca cannot be read.
    """
    if mode not in TLS_MODES:
        raise TestServerError(f"TLS mode must be one of {TLS_MODES}, not {mode!r}")
    _need_trustme()
    import trustme

    signer = trustme.CA() if ca is None else _load_ca(ca)
    if mode == "valid":
        leaf = signer.issue_cert(*GOOD_NAMES)
    elif mode == "wrong-host":
        leaf = signer.issue_cert(WRONG_NAME)
    else:
        leaf = trustme.CA().issue_cert(*GOOD_NAMES)
    directory.mkdir(parents=True, exist_ok=True)
    material = TlsMaterial(
        mode,
        directory / CA_CERT_NAME if ca is None else ca.cert_pem,
        directory / "server-cert.pem",
        directory / "server-key.pem",
    )
    if ca is None:
        signer.cert_pem.write_to_path(str(material.ca_pem))
    leaf.private_key_pem.write_to_path(str(material.key_pem))
    with material.cert_pem.open("wb") as out:
        for blob in leaf.cert_chain_pems:
            out.write(blob.bytes())
    return material
