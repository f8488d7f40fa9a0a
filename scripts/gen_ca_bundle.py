#!/usr/bin/env python3
"""Turn the PEM files of trusted root CAs into the C source of the firmware's CA bundle.

Both ports trust exactly the certificates in this bundle (the simulator can add a CA file at
start). The inputs are the roots of app/certs/ and, for the firmware, the files of the CMake
option AGENT_EXTRA_CA (docs/tls.md). The output defines, as declared in app/src/port/ca_bundle.h:

    const struct agent_ca_cert agent_ca_bundle[];   one entry per input file, DER bytes
    const size_t agent_ca_bundle_count;

and, with --count-header, a header with "#define AGENT_CA_BUNDLE_COUNT <n>" so that the
firmware can check its Kconfig credential limits at build time.

The certificates are stored as DER, not PEM: Zephyr's TLS sockets parse DER with any Mbed TLS
configuration, while PEM needs an extra Mbed TLS option, and DER is about a quarter smaller.

Every input is checked before anything is written; one bad file fails the whole run:

- the file holds exactly one "CERTIFICATE" PEM block and nothing else but white space;
- the block is valid base64 of one DER certificate that fills it exactly;
- the certificate is a root (issuer equal to subject), so that both ports accept it as a
  trust anchor;
- its key is RSA or EC on P-256 or P-384, and it is signed with SHA-256, SHA-384 or SHA-512
  (RSA PKCS#1 v1.5 or ECDSA). The firmware parses every bundled root for each TLS
  connection and one root it cannot parse fails them all, so algorithms that an Mbed TLS
  build may leave out (SHA-1, MD5, other curves, RSA-PSS) are refused;
- no certificate appears twice, and file names (which name the roots) are plain ASCII.

Nothing is written when an input is refused.

Usage:
    python3 scripts/gen_ca_bundle.py --out build/generated/agent_ca_bundle.c \\
        [--count-header build/generated/agent_ca_bundle_count.h] app/certs/*.pem
"""

from __future__ import annotations

import argparse
import base64
import binascii
import re
import sys
from dataclasses import dataclass
from pathlib import Path

BEGIN_RE = re.compile(r"^-----BEGIN ([^-]*)-----$")
END_RE = re.compile(r"^-----END ([^-]*)-----$")
# The file name (without .pem) names the root in the C source and in logs.
NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")

# Object identifiers, dotted, of the algorithms the bundle accepts.
SIGNATURE_ALGORITHMS = {
    "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
    "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
    "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
    "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
    "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
    "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
}
OID_RSA_ENCRYPTION = "1.2.840.113549.1.1.1"
OID_EC_PUBLIC_KEY = "1.2.840.10045.2.1"
EC_CURVES = {
    "1.2.840.10045.3.1.7": "P-256",
    "1.3.132.0.34": "P-384",
}

TAG_SEQUENCE = 0x30
TAG_INTEGER = 0x02
TAG_BIT_STRING = 0x03
TAG_OID = 0x06
TAG_VERSION = 0xA0  # [0] EXPLICIT Version


class BundleError(Exception):
    """An input cannot go into the bundle; the message names the file and the reason."""


@dataclass(frozen=True)
class Cert:
    name: str
    der: bytes
    key: str
    signature: str


@dataclass(frozen=True)
class Tlv:
    tag: int
    start: int  # offset of the tag byte
    value_start: int
    end: int  # offset just past the value


def read_tlv(data: bytes, pos: int, limit: int) -> Tlv:
    """Read one DER tag-length-value at ``pos``; it must end at or before ``limit``."""
    if pos + 2 > limit:
        raise ValueError("truncated DER element")
    tag = data[pos]
    first = data[pos + 1]
    value_start = pos + 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or value_start + count > limit:
            raise ValueError("bad DER length")
        length = int.from_bytes(data[value_start : value_start + count], "big")
        if length < 0x80 or data[value_start] == 0:
            raise ValueError("DER length not in its shortest form")
        value_start += count
    end = value_start + length
    if end > limit:
        raise ValueError("DER element runs past its container")
    return Tlv(tag, pos, value_start, end)


def children(data: bytes, parent: Tlv) -> list[Tlv]:
    """The elements inside a constructed element."""
    out = []
    pos = parent.value_start
    while pos < parent.end:
        child = read_tlv(data, pos, parent.end)
        out.append(child)
        pos = child.end
    return out


def first_child(data: bytes, parent: Tlv) -> Tlv:
    kids = children(data, parent)
    if not kids:
        raise ValueError("empty DER sequence")
    return kids[0]


def decode_oid(data: bytes, tlv: Tlv) -> str:
    if tlv.tag != TAG_OID or tlv.end == tlv.value_start:
        raise ValueError("expected an object identifier")
    raw = data[tlv.value_start : tlv.end]
    arcs: list[int] = []
    value = 0
    for byte in raw:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if raw[-1] & 0x80:
        raise ValueError("truncated object identifier")
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first, *arcs[1:]])


def expect(tlv: Tlv, tag: int, what: str) -> Tlv:
    if tlv.tag != tag:
        raise ValueError(f"{what}: unexpected DER tag 0x{tlv.tag:02x}")
    return tlv


def inspect_certificate(der: bytes) -> tuple[str, str]:
    """Check the structure of one X.509 certificate; return (key description, signature)."""
    cert = expect(read_tlv(der, 0, len(der)), TAG_SEQUENCE, "Certificate")
    if cert.end != len(der):
        raise ValueError("bytes after the certificate")
    parts = children(der, cert)
    if len(parts) != 3:
        raise ValueError("a certificate has three parts")
    tbs = expect(parts[0], TAG_SEQUENCE, "tbsCertificate")
    sig_alg = expect(parts[1], TAG_SEQUENCE, "signatureAlgorithm")
    expect(parts[2], TAG_BIT_STRING, "signatureValue")

    fields = children(der, tbs)
    if fields and fields[0].tag == TAG_VERSION:
        fields = fields[1:]
    if len(fields) < 6:
        raise ValueError("tbsCertificate is missing fields")
    expect(fields[0], TAG_INTEGER, "serialNumber")
    inner_alg = expect(fields[1], TAG_SEQUENCE, "signature")
    issuer = expect(fields[2], TAG_SEQUENCE, "issuer")
    expect(fields[3], TAG_SEQUENCE, "validity")
    subject = expect(fields[4], TAG_SEQUENCE, "subject")
    spki = expect(fields[5], TAG_SEQUENCE, "subjectPublicKeyInfo")

    if der[inner_alg.start : inner_alg.end] != der[sig_alg.start : sig_alg.end]:
        raise ValueError("the two signature algorithm fields differ")
    if der[issuer.start : issuer.end] != der[subject.start : subject.end]:
        raise BundleError("not a root certificate (its issuer is not its subject)")

    sig_oid = decode_oid(der, first_child(der, sig_alg))
    if sig_oid not in SIGNATURE_ALGORITHMS:
        raise BundleError(
            f"signature algorithm {sig_oid} is not one of SHA-256/384/512 with RSA or ECDSA"
        )

    key_alg = expect(first_child(der, spki), TAG_SEQUENCE, "algorithm")
    key_parts = children(der, key_alg)
    key_oid = decode_oid(der, key_parts[0])
    if key_oid == OID_RSA_ENCRYPTION:
        key = "RSA"
    elif key_oid == OID_EC_PUBLIC_KEY:
        if len(key_parts) < 2:
            raise ValueError("EC key without a curve")
        curve = decode_oid(der, key_parts[1]) if key_parts[1].tag == TAG_OID else "explicit"
        if curve not in EC_CURVES:
            raise BundleError(f"EC curve {curve} is not P-256 or P-384")
        key = f"EC {EC_CURVES[curve]}"
    else:
        raise BundleError(f"public key algorithm {key_oid} is not RSA or EC")
    return key, SIGNATURE_ALGORITHMS[sig_oid]


def parse_pem(path: Path) -> bytes:
    """The DER bytes of the single CERTIFICATE block in ``path``."""
    try:
        text = path.read_bytes().decode("ascii")
    except UnicodeDecodeError as exc:
        raise BundleError("not an ASCII PEM file") from exc
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    begins = [(i, m.group(1)) for i, line in enumerate(lines) if (m := BEGIN_RE.match(line))]
    ends = [(i, m.group(1)) for i, line in enumerate(lines) if (m := END_RE.match(line))]
    if len(begins) != 1 or len(ends) != 1:
        raise BundleError(
            f"expected exactly one PEM block, found {len(begins)} BEGIN and {len(ends)} END lines"
        )
    (first, label), (last, end_label) = begins[0], ends[0]
    if label != "CERTIFICATE" or end_label != "CERTIFICATE":
        raise BundleError(f"the PEM block is {label!r}, not 'CERTIFICATE'")
    if last < first:
        raise BundleError("END line before BEGIN line")
    if any(lines[:first]) or any(lines[last + 1 :]):
        raise BundleError("text outside the CERTIFICATE block")
    body = "".join(lines[first + 1 : last])
    try:
        der = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"the block is not valid base64 ({exc})") from exc
    if not der:
        raise BundleError("empty CERTIFICATE block")
    return der


def load(path: Path) -> Cert:
    if not NAME_RE.match(path.stem):
        raise BundleError(f"{path}: name the file with 1 to 64 of A-Z a-z 0-9 _ . + -")
    try:
        der = parse_pem(path)
        key, signature = inspect_certificate(der)
    except BundleError as exc:
        raise BundleError(f"{path}: {exc}") from exc
    except ValueError as exc:
        raise BundleError(f"{path}: not a valid X.509 certificate ({exc})") from exc
    return Cert(path.stem, der, key, signature)


def render(certs: list[Cert]) -> str:
    out = [
        "/* Generated by scripts/gen_ca_bundle.py from the roots given: do not edit. */",
        '#include "ca_bundle.h"',
        "",
    ]
    for index, cert in enumerate(certs):
        out.append(f"/* {cert.name}: {cert.key}, {cert.signature} */")
        out.append(f"static const uint8_t ca_cert_{index}[] = {{")
        for row in range(0, len(cert.der), 12):
            chunk = cert.der[row : row + 12]
            out.append("\t" + " ".join(f"0x{b:02x}," for b in chunk))
        out.append("};")
        out.append("")
    out.append("const struct agent_ca_cert agent_ca_bundle[] = {")
    for index, cert in enumerate(certs):
        out.append(f'\t{{"{cert.name}", ca_cert_{index}, sizeof(ca_cert_{index})}},')
    out.append("};")
    out.append("")
    out.append(f"const size_t agent_ca_bundle_count = {len(certs)};")
    out.append("")
    return "\n".join(out)


def render_count_header(count: int) -> str:
    return (
        "/* Generated by scripts/gen_ca_bundle.py: do not edit. */\n"
        "#ifndef AGENT_CA_BUNDLE_COUNT_H\n"
        "#define AGENT_CA_BUNDLE_COUNT_H\n"
        f"#define AGENT_CA_BUNDLE_COUNT {count}\n"
        "#endif\n"
    )


def build(paths: list[Path]) -> tuple[str, int]:
    if not paths:
        raise BundleError("no PEM files given: a bundle without roots would trust nothing")
    certs = [load(path) for path in sorted(paths, key=lambda p: p.name)]
    seen: dict[bytes, str] = {}
    names: dict[str, Path] = {}
    for cert, path in zip(certs, sorted(paths, key=lambda p: p.name)):
        if cert.der in seen:
            raise BundleError(f"{path}: the same certificate as {seen[cert.der]}")
        if cert.name in names:
            raise BundleError(f"{path}: a second file named {cert.name} ({names[cert.name]})")
        seen[cert.der] = str(path)
        names[cert.name] = path
    return render(certs), len(certs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="C file to write")
    parser.add_argument("--count-header", type=Path, help="header with the number of roots")
    parser.add_argument("pem", type=Path, nargs="*", help="root CA certificates, one per file")
    args = parser.parse_args(argv)
    try:
        source, count = build(list(args.pem))
    except (BundleError, OSError) as exc:
        print(f"gen_ca_bundle.py: {exc}", file=sys.stderr)
        return 1
    outputs: list[tuple[Path, str]] = [(args.out, source)]
    if args.count_header is not None:
        outputs.append((args.count_header, render_count_header(count)))
    for path, text in outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="ascii")
    return 0


if __name__ == "__main__":
    sys.exit(main())
