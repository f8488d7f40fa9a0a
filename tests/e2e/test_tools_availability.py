"""Tool availability derived at run time (docs/tools.md, "Availability"): `agent tools` gives
the reason of every unavailable tool, an unavailable tool is in no request's tools and
tool_search never activates it, and a call to one anyway is answered with an error result
naming the reason.

On the simulator the devices come from the board file (docs/simulated-board.md): a board
without them makes the hardware tools and network_status unavailable. On the firmware they
come from the image (its Kconfig and devicetree): mps2/an385 under QEMU has no network, no
GPIO driver, no display and no sensor service, and the test reads the image's .config to
know which tools must be unavailable there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_host.testing.agent_tools import ToolRow, ask, configure, tool_counters, tool_table
from agent_host.testing.twister_device import TwisterDevices
from agent_host.testing.twister_tls import dotconfig
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import (
    ToolCall,
    advertised_names,
    text_reply,
    tool_call_reply,
)
from agent_host.testserver.plans import Api
from tool_checks import API_PATH, APIS, DialogueCheck, activated_names, bootstrap

# The reason for each capability, as app/src/tools/tool_capability.c words it.
REASONS = {
    "filesystem": "no filesystem is mounted (neither /lfs nor /SD:)",
    "lfs": "the LittleFS volume is not mounted at /lfs",
    "sd": "no SD card is mounted at /SD:",
    "gpio": "the board has no GPIO slot",
    "bus": "the board has no I2C, SPI, UART or 1-Wire bus",
    "display": "the board has no display",
    "sensors": "no sensor service is in this build",
    "network": "the device has no network interface",
    "script-runtime": "no script runtime is built in",
}
# What each hardware tool needs.
NEEDS = {"gpio_list": "gpio", "gpio_read": "gpio", "buses_list": "bus",
         "display_list": "display", "network_status": "network", "sensors_read": "sensors"}
STORAGE = ["storage_stat", "storage_list", "storage_read", "storage_write", "storage_search",
           "storage_read_range", "storage_patch"]
# A query that names every hardware tool's subject.
EVERY_DEVICE = "gpio pins buses i2c display screen network wifi sensors battery"


def rows_by_name(rows: list[ToolRow]) -> dict[str, ToolRow]:
    return {r.name: r for r in rows}


def kconfig_values(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


#: Tools with a check of their own besides a capability, and its reason while it fails: no
#: image installs a skill at boot (docs/modules.md "Skills") or configures an embedding pass
#: (docs/memory.md).
NO_EMBEDDINGS = "no embeddings endpoint is configured (agent config embeddings URL)"
OWN_CHECK = {"skill_use": "no skill is installed", "memory_recall": NO_EMBEDDINGS,
             "memory_write": NO_EMBEDDINGS}


def firmware_unavailable(config: dict[str, str]) -> set[str]:
    """The tools a Zephyr image must report unavailable, from its .config: a tool whose
    drivers are left out has no device to find (port/zephyr/board_inspect.c)."""
    def on(name: str) -> bool:
        return config.get(name) == "y"

    out = {"sensors_read"}  # no sensor service is part of the firmware yet
    if not on("CONFIG_NETWORKING"):
        out.add("network_status")
    if not on("CONFIG_GPIO"):
        out |= {"gpio_list", "gpio_read"}
    if not on("CONFIG_DISPLAY"):
        out.add("display_list")
    if not any(on(x) for x in ("CONFIG_SERIAL", "CONFIG_I2C", "CONFIG_SPI", "CONFIG_W1")):
        out.add("buses_list")
    return out


def test_every_unavailable_tool_says_why(sims) -> None:
    """On any device: each unavailable tool's reason is its capability's; what must be
    unavailable is (the simulator's default board has every device; the firmware image's
    .config says what it lacks); the storage tools are there (/lfs is mounted)."""
    dut = sims.start()
    _, rows = tool_table(dut)
    by_name = rows_by_name(rows)
    for row in rows:
        if row.available == "no" and row.name in OWN_CHECK:
            assert row.reason == OWN_CHECK[row.name], row
        elif row.available == "no":
            assert row.reason == REASONS[row.needs], row
        if row.name in NEEDS:
            assert row.needs == NEEDS[row.name], row
        if row.name in STORAGE:
            assert (row.needs, row.available) == ("filesystem", "yes"), row
    if isinstance(sims, TwisterDevices):
        must = firmware_unavailable(kconfig_values(dotconfig(sims.build_dir))) | set(OWN_CHECK)
        print("unavailable on this image:",
              {r.name: r.reason for r in rows if r.available == "no"})
        for name in must & set(by_name):
            assert by_name[name].available == "no", by_name[name]
    else:
        assert [r.name for r in rows if r.available == "no"] == ["memory_recall", "memory_write",
                                                                 "skill_use"]
    assert by_name["hardware_describe"].available == "yes"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.sim_only("a board file without devices (agent_sim --board)")
def test_a_board_without_devices_offers_none_of_their_tools(sims, tmp_path: Path, api: Api
                                                            ) -> None:
    board = tmp_path / "bare.board"
    board.write_text('board model="no devices at all"\n')
    dut = sims.start([f"--board={board}"])
    _, rows = tool_table(dut)
    by_name = rows_by_name(rows)
    gone = sorted(NEEDS)
    for name in gone:
        assert (by_name[name].available, by_name[name].reason) == (
            "no", REASONS[NEEDS[name]]), by_name[name]
    assert by_name["hardware_describe"].available == "yes"
    boot = bootstrap(dut)
    search = ToolCall("tool_search", {"query": EVERY_DEVICE}, "call_search")
    call = ToolCall("gpio_list", {}, "call_gpio")
    replies = [
        tool_call_reply(api, search.name, search.arguments, search.call_id,
                        response_id="resp_search"),
        tool_call_reply(api, call.name, call.arguments, call.call_id, response_id="resp_gpio"),
        text_reply(api, "This board has no GPIO.", response_id="resp_end"),
    ]
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, "which pins does this board have?")
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    assert run.errors == [], run.text
    why = f"gpio_list is not available: {REASONS['gpio']}"
    assert run.outcomes == ["[tool] tool_search: done", f"[tool] gpio_list: failed: {why}"]
    # No request offered any of them; tool_search activated none.
    for req in reqs:
        offered = advertised_names(req.json, api) or []
        assert not set(offered) & set(gone), offered
    check = DialogueCheck(api, "which pins does this board have?")
    check.turn(reqs[0], boot)
    check.called(search, "resp_search")
    names = activated_names(reqs[1], api)
    assert not set(names) & set(gone), names
    check.turn(reqs[1], boot + names)
    check.called(call, "resp_gpio")
    assert check.turn(reqs[2], boot + names) == {"error": why}
    counters = tool_counters(dut)
    assert (counters.executed, counters.denied, counters.failed) == (1, 0, 1)


@pytest.mark.sim_only("board files (agent_sim --board)")
@pytest.mark.parametrize(("caps", "available"), [("wifi", "yes"), ("ethernet", "yes"),
                                                 ("bluetooth,usb", "no")])
def test_network_status_needs_a_network_interface(sims, tmp_path: Path, caps: str,
                                                  available: str) -> None:
    board = tmp_path / "net.board"
    board.write_text(f"board caps={caps}\n")
    dut = sims.start([f"--board={board}"])
    row = rows_by_name(tool_table(dut)[1])["network_status"]
    assert row.available == available, row
    assert row.reason == ("" if available == "yes" else REASONS["network"])
