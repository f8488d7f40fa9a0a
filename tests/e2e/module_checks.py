"""The console's `agent modules` table as the module tests read it (docs/modules.md, "Listing")."""

from __future__ import annotations

from agent_host.testing.sim_device import SimDevice


def console_modules(dut: SimDevice) -> dict[str, tuple[str, str, str, str]]:
    """`agent modules` as {name: (kind, size, sha256 prefix, state)}, its heading checked."""
    lines = dut.exec_command("agent modules")
    assert lines[0].split() == ["name", "kind", "bytes", "sha256", "state"], lines
    rows = {}
    for line in lines[1:]:
        if line.startswith(("catalog:", "journal:")):
            continue
        name, kind, size, digest, state = line.split(None, 4)
        rows[name] = (kind, size, digest, state)
    return rows
