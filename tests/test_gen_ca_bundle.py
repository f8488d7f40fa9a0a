"""scripts/gen_ca_bundle.py: the CA bundle both ports compile in (docs/tls.md).

The bundle made from app/certs/ is compiled with the host compiler and read back; every DER
array must be the certificate the `cryptography` package reads from the same PEM file. Then
each refusal rule is checked on a certificate made to break it.
"""

from __future__ import annotations

import base64
import datetime
import subprocess
import sys
from pathlib import Path

import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

REPO_DIR = Path(__file__).resolve().parents[1]
SCRIPT = REPO_DIR / "scripts" / "gen_ca_bundle.py"
CERTS_DIR = REPO_DIR / "app" / "certs"
PORT_DIR = REPO_DIR / "app" / "src" / "port"

DUMP_C = r"""
#include <stdio.h>
#include "ca_bundle.h"

int main(void)
{
	printf("%zu\n", agent_ca_bundle_count);
	for (size_t i = 0; i < agent_ca_bundle_count; i++) {
		printf("%s ", agent_ca_bundle[i].name);
		for (size_t j = 0; j < agent_ca_bundle[i].der_bytes; j++) {
			printf("%02x", agent_ca_bundle[i].der[j]);
		}
		printf("\n");
	}
	return 0;
}
"""

SHA256_RSA = bytes.fromhex("06092a864886f70d01010b")
SHA1_RSA = bytes.fromhex("06092a864886f70d010105")


def run(out: Path, *pems: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(SCRIPT), "--out", str(out), *map(str, pems)]
    return subprocess.run(args, capture_output=True, text=True, check=False)


def refused(tmp_path: Path, *pems: Path) -> str:
    out = tmp_path / "bundle.c"
    result = run(out, *pems)
    assert result.returncode == 1
    assert not out.exists(), "nothing may be written when an input is refused"
    return result.stderr


def root(
    tmp_path: Path,
    name: str,
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey,
    digest: hashes.SHA256 | hashes.SHA384 | hashes.SHA512 | None = None,
    issuer: str | None = None,
) -> Path:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer or name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, digest or hashes.SHA256())
    )
    path = tmp_path / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def pem_of(der: bytes) -> str:
    cert = x509.load_der_x509_certificate(der)
    return cert.public_bytes(serialization.Encoding.PEM).decode()


# One of the public roots has a serial number that is not positive, which `cryptography`
# still reads but warns about.
@pytest.mark.filterwarnings("ignore:Parsed a serial number")
def test_repository_bundle_compiles_to_the_same_certificates(tmp_path: Path) -> None:
    pems = sorted(CERTS_DIR.glob("*.pem"))
    assert pems, "app/certs/ holds no roots"
    out = tmp_path / "bundle.c"
    result = run(out, *pems)
    assert result.returncode == 0, result.stderr
    dump_c = tmp_path / "dump.c"
    dump_c.write_text(DUMP_C)
    exe = tmp_path / "dump"
    compiled = subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{PORT_DIR}",
         str(out), str(dump_c), "-o", str(exe)],
        capture_output=True, text=True, check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    count, *entries = lines.splitlines()
    assert int(count) == len(pems) == len(entries)
    for pem, entry in zip(pems, entries):
        name, der_hex = entry.split(" ")
        assert name == pem.stem
        expected = x509.load_pem_x509_certificate(pem.read_bytes())
        assert bytes.fromhex(der_hex) == expected.public_bytes(serialization.Encoding.DER)


def test_accepts_rsa_p256_and_p384_roots(tmp_path: Path) -> None:
    pems = [
        root(tmp_path, "rsa_root", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        root(tmp_path, "p256_root", ec.generate_private_key(ec.SECP256R1())),
        root(tmp_path, "p384_root", ec.generate_private_key(ec.SECP384R1()), hashes.SHA384()),
    ]
    out = tmp_path / "bundle.c"
    header = tmp_path / "inc" / "agent_ca_bundle_count.h"
    args = [sys.executable, str(SCRIPT), "--out", str(out), "--count-header", str(header)]
    result = subprocess.run([*args, *map(str, pems)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "const size_t agent_ca_bundle_count = 3;" in text
    assert "#define AGENT_CA_BUNDLE_COUNT 3\n" in header.read_text()
    assert '{"p256_root", ca_cert_0, sizeof(ca_cert_0)}' in text  # sorted by file name


def test_refuses_no_input(tmp_path: Path) -> None:
    assert "no PEM files" in refused(tmp_path)


def test_refuses_two_certificates_in_one_file(tmp_path: Path) -> None:
    one = root(tmp_path, "one", ec.generate_private_key(ec.SECP256R1()))
    two = root(tmp_path, "two", ec.generate_private_key(ec.SECP256R1()))
    both = tmp_path / "both.pem"
    both.write_text(one.read_text() + two.read_text())
    assert "exactly one PEM block" in refused(tmp_path, both)


def test_refuses_a_private_key(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(trustme.CA().private_key_pem.bytes())
    assert "not 'CERTIFICATE'" in refused(tmp_path, key)


def test_refuses_text_outside_the_block(tmp_path: Path) -> None:
    pem = root(tmp_path, "chatty", ec.generate_private_key(ec.SECP256R1()))
    pem.write_text("Subject: chatty\n" + pem.read_text())
    assert "text outside" in refused(tmp_path, pem)


def test_refuses_bad_base64_and_truncated_der(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----\n")
    assert "not valid base64" in refused(tmp_path, bad)
    good = root(tmp_path, "cut", ec.generate_private_key(ec.SECP256R1()))
    der = x509.load_pem_x509_certificate(good.read_bytes()).public_bytes(
        serialization.Encoding.DER
    )
    body = base64.b64encode(der[:-10]).decode()
    good.write_text(f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n")
    assert "not a valid X.509 certificate" in refused(tmp_path, good)


def test_refuses_sha1_signed_root(tmp_path: Path) -> None:
    # `cryptography` no longer signs with SHA-1: relabel a SHA-256 certificate instead (the
    # script reads the algorithm; it does not check the signature).
    pem = root(tmp_path, "sha1", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    der = x509.load_pem_x509_certificate(pem.read_bytes()).public_bytes(
        serialization.Encoding.DER
    )
    assert der.count(SHA256_RSA) == 2
    pem.write_text(pem_of(der.replace(SHA256_RSA, SHA1_RSA)))
    assert "1.2.840.113549.1.1.5" in refused(tmp_path, pem)


def test_refuses_p521_root(tmp_path: Path) -> None:
    pem = root(tmp_path, "p521", ec.generate_private_key(ec.SECP521R1()), hashes.SHA512())
    assert "not P-256 or P-384" in refused(tmp_path, pem)


def test_refuses_a_certificate_that_is_not_a_root(tmp_path: Path) -> None:
    pem = root(tmp_path, "leafish", ec.generate_private_key(ec.SECP256R1()), issuer="someone")
    assert "not a root certificate" in refused(tmp_path, pem)


def test_refuses_duplicates_and_odd_names(tmp_path: Path) -> None:
    pem = root(tmp_path, "twice", ec.generate_private_key(ec.SECP256R1()))
    copy = tmp_path / "twice_again.pem"
    copy.write_text(pem.read_text())
    assert "the same certificate" in refused(tmp_path, pem, copy)
    odd = tmp_path / "Fő tanúsítvány.pem"
    odd.write_text(pem.read_text())
    assert "name the file" in refused(tmp_path, odd)
