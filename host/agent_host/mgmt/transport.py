"""Where the device is: a serial port (a board's UART or the simulator's pty), a UDP address or a
BLE device, each reached through smpclient's own transport."""

from __future__ import annotations

import asyncio
import ipaddress
import os
from dataclasses import dataclass
from typing import Literal

from smpclient.transport import SMPTransport

from ..errors import TransportError, UsageError

DEFAULT_UDP_PORT = 1337
"""The SMP UDP port (Zephyr's CONFIG_MCUMGR_TRANSPORT_UDP_PORT default)."""

DEFAULT_BAUDRATE = 115200
MIN_MTU = 32
"""Below this no request of the group fits (an 8-byte header, the CBOR map, the frame's own
length and CRC)."""
MAX_MTU = 65535

Kind = Literal["serial", "udp", "ble"]


@dataclass(frozen=True)
class Endpoint:
    """One device address and how to reach it."""

    kind: Kind
    address: str
    port: int = DEFAULT_UDP_PORT
    """UDP only."""
    baudrate: int = DEFAULT_BAUDRATE
    """Serial only."""
    mtu: int | None = None
    """The largest SMP message the device takes; None: ask the device."""

    def __str__(self) -> str:
        if self.kind == "udp":
            host = f"[{self.address}]" if ":" in self.address else self.address
            return f"udp {host}:{self.port}"
        return f"{self.kind} {self.address}"


def parse_udp(text: str) -> tuple[str, int]:
    """HOST, HOST:PORT, IPv6 or [IPv6]:PORT -> (host, port)."""
    host, port_text = text, ""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or (end + 1 < len(text) and text[end + 1] != ":"):
            raise UsageError(f"--udp {text}: expected [IPV6]:PORT")
        host, port_text = text[1:end], text[end + 2:]
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif text.count(":") > 1:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            raise UsageError(f"--udp {text}: an IPv6 address with a port is written "
                             "[ADDRESS]:PORT") from None
    if not host:
        raise UsageError(f"--udp {text}: no host")
    if not port_text:
        return host, DEFAULT_UDP_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise UsageError(f"--udp {text}: the port must be a number from 1 to 65535")
    return host, int(port_text)


def make_transport(endpoint: Endpoint) -> SMPTransport:
    """The smpclient transport for @endpoint (not connected yet)."""
    if endpoint.kind == "serial":
        from smpclient.transport.serial import Auto, BufferSize, SMPSerialTransport

        strategy = BufferSize(buf_size=endpoint.mtu) if endpoint.mtu else Auto()
        return SMPSerialTransport(strategy, baudrate=endpoint.baudrate)
    if endpoint.kind == "udp":
        from smpclient.transport.udp import SMPUDPTransport

        return SMPUDPTransport(mtu=endpoint.mtu or 1500)
    try:
        from smpclient.transport.ble import SMPBLETransport
    except ImportError:
        raise TransportError("BLE needs the bleak package: pip install "
                             "'zephyr-agent-host[ble]'") from None
    return SMPBLETransport()


async def connect(transport: SMPTransport, endpoint: Endpoint, timeout: float) -> None:
    """Open @transport to @endpoint; every failure is a TransportError naming the endpoint."""
    if endpoint.kind == "serial" and not os.path.exists(endpoint.address):
        raise TransportError(f"cannot open {endpoint}: no such device")
    try:
        if endpoint.kind == "udp":
            from smpclient.transport.udp import SMPUDPTransport

            assert isinstance(transport, SMPUDPTransport)
            await transport.connect(endpoint.address, timeout, port=endpoint.port)
        else:
            await transport.connect(endpoint.address, timeout)
    except (TimeoutError, asyncio.TimeoutError):
        raise TransportError(f"cannot open {endpoint}: not reachable within {timeout:g} s") \
            from None
    except OSError as err:
        if endpoint.kind == "ble":
            raise TransportError(f"cannot open {endpoint}: the Bluetooth service is not "
                                 f"reachable ({describe(err)})") from None
        raise TransportError(f"cannot open {endpoint}: {describe(err)}") from None
    except Exception as err:  # noqa: BLE001 - every transport raises its own kinds
        raise TransportError(f"cannot open {endpoint}: {describe(err)}") from None


def describe(err: BaseException) -> str:
    """A short reason for a transport exception (some carry no message at all)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
