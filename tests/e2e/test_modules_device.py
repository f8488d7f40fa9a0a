"""Modules on every device image, the firmware under Twister included (docs/modules.md): the
supplied roles are installed at boot (the simulator's --modules default, the firmware's
packaged assets) and make the conductor the console agent; the console's listing, status and
removal refusals; a removed role comes back at the next start, from the same import."""

from __future__ import annotations

from agent_host.testing.sim_device import SimDevice
from module_checks import console_modules

SUPPLIED = ("conductor", "verifier", "worker")


def installed(dut: SimDevice) -> dict[str, str]:
    """{name: kind} of the installed entries of `agent modules`."""
    return {name: row[0] for name, row in console_modules(dut).items() if row[3] == "installed"}


def test_the_supplied_roles_are_installed_at_boot(dut: SimDevice) -> None:
    rows = installed(dut)
    assert {n: rows.get(n) for n in SUPPLIED} == {n: "role" for n in SUPPLIED}
    assert dut.exec_command("agent 0 role") == ["agent 0: role conductor (the console agent)"]
    assert "agent 0:   the console agent, role conductor" in dut.exec_command("agent status")
    assert dut.exec_command("agent skills") == [
        "no skills installed; agent import DIR installs one"]


def test_removal_refusals_and_a_removal(dut: SimDevice) -> None:
    assert dut.exec_command("agent remove conductor") == [
        "remove: conductor refused: role conductor is in use by the console agent (agent 0)"]
    assert dut.exec_command("agent remove system_status") == [
        ("remove: system_status refused: system_status is a built-in tool; built-in tools "
         "cannot be removed")]
    assert dut.exec_command("agent remove nobody") == [
        'remove: nobody refused: no module named "nobody"']
    assert dut.exec_command("agent remove verifier") == ["remove: verifier removed"]
    assert "verifier" not in installed(dut)


def test_an_import_of_a_missing_directory_is_refused(dut: SimDevice) -> None:
    assert dut.exec_command("agent import /lfs/no-such-module") == [
        "import: refused: /lfs/no-such-module: no module.manifest and no SKILL.md"]
    assert dut.exec_command("agent import") == ["agent: usage: agent import PATH"]
