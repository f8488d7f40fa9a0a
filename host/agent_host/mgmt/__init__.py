"""The agent management group (SMP group 64, docs/mgmt-group.md) over smpclient transports.

    async with open_device(Endpoint("serial", "/dev/pts/5")) as device:
        print((await device.status()).version)
"""

from .device import (
    Conversations,
    Device,
    Export,
    Imported,
    ModuleList,
    ToolTable,
    open_device,
)
from .transport import Endpoint, parse_udp

__all__ = ["Conversations", "Device", "Endpoint", "Export", "Imported", "ModuleList", "ToolTable",
           "open_device", "parse_udp"]
