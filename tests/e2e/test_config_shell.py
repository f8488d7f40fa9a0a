"""`agent config`, `agent status` and `agent forget` through the simulator's console."""

from __future__ import annotations

import pytest
from agent_host.testing.sim_device import SimDevice
from flash_image import read_file

DEFAULT_STATUS = {
    "endpoint": "(not set)",
    "protocol": "none",
    "model": "(not set)",
    "key": "not set",
    "reasoning": "medium",
    "tools": "confirm",
    "max-tools": "16",
    "user": "user",
}


def status(dut: SimDevice) -> dict[str, str]:
    fields = {}
    for line in dut.exec_command("agent status"):
        if line.startswith(("pool:", "tool calls:", "last request:", "stack:", "requests:",
                            "internal:", "psram:", "heap:", "agent 0:", "modules:",
                            "instructions:")):
            continue  # memory, activity and modules, checked by their own tests
        name, sep, value = line.partition(":")
        assert sep, f"unexpected status line {line!r}"
        fields[name.strip()] = value.strip()
    fields.pop("version")
    # The network line depends on the board (a Wi-Fi station or none): test_status_network.
    fields.pop("network", None)
    return fields


@pytest.mark.sim_only("the simulator's boot banner (the firmware prints Zephyr's)")
def test_boot_banner_and_prompt(sims) -> None:
    dut = sims.start()
    assert dut.exec_command("help")[0] == "Available commands:"
    assert "*** Booting agent simulator" in dut.transcript.decode()


def test_defaults(dut: SimDevice) -> None:
    assert status(dut) == DEFAULT_STATUS


@pytest.mark.parametrize(
    ("url", "protocol"),
    [
        ("https://api.openai.com/v1/responses", "responses"),
        ("https://api.openai.com/v1/chat/completions", "chat-completions"),
        ("http://127.0.0.1:8080/v1/chat/completions", "chat-completions"),
        ("http://localhost:1234/v1/responses?api-version=2025-04-01", "responses"),
        ("HTTPS://example.com/openai/responses", "responses"),
        ("http://[::1]:8000/v1/responses", "responses"),
        ("https://example.com/v1/responses/x", "chat-completions"),
    ],
)
def test_endpoint_selects_protocol(dut: SimDevice, url: str, protocol: str) -> None:
    assert dut.exec_command(f"agent config endpoint {url}") == [
        f"endpoint set (protocol: {protocol})"
    ]
    st = status(dut)
    assert st["endpoint"] == url
    assert st["protocol"] == protocol
    assert dut.exec_command("agent config endpoint") == [f"endpoint: {url}"]


@pytest.mark.needs_persistent_flash("restarts and expects the settings kept")
def test_every_setting_and_restart(sims) -> None:
    dut = sims.start()
    commands = {
        "agent config endpoint https://api.openai.com/v1/responses": "endpoint set (protocol: responses)",
        "agent config model gpt-5-mini": "model set to gpt-5-mini",
        "agent config reasoning xhigh": "reasoning set to xhigh",
        "agent config tools read-only": "tools set to read-only",
        "agent config max-tools 032": "max-tools set to 32",
        "agent config user ada": "user set to ada",
        "agent config key sk-test-0123456789": "key set",
    }
    for cmd, answer in commands.items():
        assert dut.exec_command(cmd) == [answer]
    expected = {
        "endpoint": "https://api.openai.com/v1/responses",
        "protocol": "responses",
        "model": "gpt-5-mini",
        "key": "set",
        "reasoning": "xhigh",
        "tools": "read-only",
        "max-tools": "32",
        "user": "ada",
    }
    assert status(dut) == expected
    dut = sims.restart(dut)
    assert status(dut) == expected
    assert "sk-test-0123456789" not in dut.transcript.decode()


@pytest.mark.parametrize("level", ["none", "minimal", "low", "medium", "high", "xhigh", "max"])
def test_every_reasoning_level(dut: SimDevice, level: str) -> None:
    assert dut.exec_command(f"agent config reasoning {level}") == [f"reasoning set to {level}"]
    assert status(dut)["reasoning"] == level


@pytest.mark.parametrize("policy", ["off", "read-only", "confirm"])
def test_every_tools_policy(dut: SimDevice, policy: str) -> None:
    dut.exec_command("agent config tools off" if policy != "off" else "agent config tools confirm")
    assert dut.exec_command(f"agent config tools {policy}") == [f"tools set to {policy}"]
    assert status(dut)["tools"] == policy


@pytest.mark.parametrize("count", ["1", "31", "32"])
def test_max_tools_bounds_accepted(dut: SimDevice, count: str) -> None:
    assert dut.exec_command(f"agent config max-tools {count}") == [f"max-tools set to {count}"]
    assert status(dut)["max-tools"] == count


BAD_INPUT = [
    # (command, expected error text)
    ("agent bogus", "agent: unknown subcommand 'bogus'; try 'agent help'"),
    ("agent config colour red", "agent: unknown setting 'colour'"),
    ("agent status now", "agent: status takes no arguments"),
    ("agent forget everything", "agent: forget takes no arguments"),
    ("agent config model a b", "agent: config model takes one value; nothing changed"),
    ("agent config max-tools 0", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools 33", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools -1", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools +5", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools 1.5", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools 99999999999", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config max-tools ''", "agent: max-tools must be a whole number from 1 to 32; nothing changed"),
    ("agent config reasoning extreme", "agent: reasoning must be one of: none minimal low medium high xhigh max; nothing changed"),
    ("agent config reasoning MEDIUM", "agent: reasoning must be one of: none minimal low medium high xhigh max; nothing changed"),
    ("agent config tools yolo", "agent: tools must be one of: off read-only confirm; nothing changed"),
    ("agent config endpoint ftp://example.com/v1/responses", "agent: endpoint must be a complete http:// or https:// URL; nothing changed"),
    ("agent config endpoint api.openai.com/v1/responses", "agent: endpoint must be a complete http:// or https:// URL; nothing changed"),
    ("agent config endpoint https:///v1/responses", "agent: endpoint has no host; nothing changed"),
    ("agent config endpoint https://api.openai.com", "agent: endpoint needs the complete path, such as /v1/chat/completions or /v1/responses; nothing changed"),
    ("agent config endpoint https://api.openai.com/", "agent: endpoint needs the complete path, such as /v1/chat/completions or /v1/responses; nothing changed"),
    ("agent config endpoint https://user:pw@example.com/v1/responses", "agent: endpoint must not contain credentials; use agent config key; nothing changed"),
    ("agent config endpoint https://example.com:0/v1/responses", "agent: endpoint port must be a number from 1 to 65535; nothing changed"),
    ("agent config endpoint https://example.com:65536/v1/responses", "agent: endpoint port must be a number from 1 to 65535; nothing changed"),
    ("agent config endpoint https://example.com:80a/v1/responses", "agent: endpoint port must be a number from 1 to 65535; nothing changed"),
    ("agent config endpoint https://exa$mple.com/v1/responses", "agent: endpoint host may only contain letters, digits, '-', '.' and '_'; nothing changed"),
    ("agent config endpoint 'https://example.com/v1/res ponses'", "agent: endpoint contains a space or a control character; nothing changed"),
    ("agent config endpoint https://example.com/v1/responses#x", "agent: endpoint must not contain a fragment (#); nothing changed"),
    ("agent config endpoint https://example.com/v1/{x}", "agent: endpoint contains a character that is not allowed in a URL; nothing changed"),
    ("agent config endpoint http://[::1/v1/responses", "agent: endpoint has a malformed IPv6 address; nothing changed"),
    ("agent config endpoint http://.-/v1/responses", "agent: endpoint host needs a letter or a digit; nothing changed"),
    ("agent config endpoint https://example.com/" + "a" * 237, "agent: endpoint is too long (at most 255 bytes); nothing changed"),
    ("agent config model " + "m" * 128, "agent: model is too long (at most 127 bytes); nothing changed"),
    ("agent config model ''", "agent: model is empty; nothing changed"),
    ("agent config user " + "u" * 32, "agent: user is too long (at most 31 bytes); nothing changed"),
    ("agent config user 'a b'", "agent: user may only contain letters, digits, '-', '.' and '_'; nothing changed"),
    ("agent config user a/b", "agent: user may only contain letters, digits, '-', '.' and '_'; nothing changed"),
    ("agent config key " + "k" * 256, "agent: key is too long (at most 255 bytes); key unchanged"),
    ("agent config key 'sk a'", "agent: key contains a space or a control character; key unchanged"),
    ("agent config key a b", "agent: config key takes one value; nothing changed"),
]


@pytest.mark.parametrize(("cmd", "error"), BAD_INPUT, ids=[c[:60] for c, _ in BAD_INPUT])
@pytest.mark.needs_host_flash("reads the settings store in the flash image")
def test_bad_input_changes_nothing(sims, cmd: str, error: str) -> None:
    dut = sims.start()
    dut.exec_command("agent config endpoint http://127.0.0.1:8080/v1/chat/completions")
    dut.exec_command("agent config model local-model")
    dut.exec_command("agent config max-tools 7")
    dut.exec_command("agent config key sk-keep-me")
    before = status(dut)
    out = dut.exec_command(cmd)
    assert out[0] == error
    assert status(dut) == before
    dut = sims.restart(dut)
    assert status(dut) == before
    # `status` only says whether a key is set: check the stored key itself.
    dut.stop()
    settings = read_file(sims.flash, ".settings")
    assert b"sk-keep-me" in settings
    refused = cmd.split(" ", 3)[3].strip("'").encode() if cmd.startswith("agent config key ") else b""
    assert refused == b"" or refused not in settings


@pytest.mark.sim_only("the simulator's line editor; the Zephyr shell has its own limit")
def test_overlong_line_is_not_run(dut: SimDevice) -> None:
    line = "agent config model " + "m" * 1100
    out = dut.exec_command(line, timeout=20)
    assert out == ["line too long (at most 1087 bytes); not run"]
    assert status(dut)["model"] == "(not set)"


def test_longest_values_accepted(dut: SimDevice) -> None:
    url = "https://example.com/" + "a" * 235
    assert len(url) == 255
    assert dut.exec_command(f"agent config endpoint {url}") == [
        "endpoint set (protocol: chat-completions)"
    ]
    assert dut.exec_command("agent config model " + "m" * 127) == ["model set to " + "m" * 127]
    assert dut.exec_command("agent config user " + "u" * 31) == ["user set to " + "u" * 31]
    assert dut.exec_command("agent config key " + "k" * 255) == ["key set"]
    st = status(dut)
    assert st["endpoint"] == url and st["model"] == "m" * 127 and st["key"] == "set"


@pytest.mark.needs_persistent_flash("restarts and expects the settings kept")
def test_forget_erases_everything(sims) -> None:
    dut = sims.start()
    dut.exec_command("agent config endpoint https://api.openai.com/v1/responses")
    dut.exec_command("agent config model gpt-5")
    dut.exec_command("agent config key sk-forget-me")
    dut.exec_command("agent config reasoning low")
    dut.exec_command("agent config tools off")
    dut.exec_command("agent config max-tools 3")
    dut.exec_command("agent config user bob")
    assert dut.exec_command("agent forget") == ["agent configuration erased"]
    assert status(dut) == DEFAULT_STATUS
    dut = sims.restart(dut)
    assert status(dut) == DEFAULT_STATUS


def test_unknown_shell_command(dut: SimDevice) -> None:
    assert dut.exec_command("agnet status") == ["agnet: command not found"]


def test_help(dut: SimDevice) -> None:
    out = dut.exec_command("agent help")
    assert out[0] == "agent - LLM agent; bare `agent` opens a new chat"
    assert any(line.strip().startswith("config NAME [VALUE]") for line in out)
    for sub in ("new", "list", "resume SLOT", "delete SLOT", "tools", "ask PROMPT"):
        assert any(line.strip().startswith(sub) for line in out), sub
    usage = dut.exec_command("agent config")
    assert usage[0] == "usage: agent config NAME [VALUE]"


def test_status_shows_the_stream_pools(dut: SimDevice) -> None:
    pools = [x for x in dut.exec_command("agent status") if x.startswith("pool:")]
    # Nothing streamed yet: the stream path's pools were never taken from.
    assert ("pool:      stream   2/2 free (lowest 2), 4096 B blocks, psram; peak 0 B held, "
            "0 B written") in pools
    assert ("pool:      pretype  2/2 free (lowest 2), 1032 B blocks, psram; peak 0 B held, "
            "0 B written") in pools
    assert ("pool:      request  1/1 free (lowest 1), 32768 B blocks, psram; peak 0 B held, "
            "0 B written") in pools
    # The conversation store's one I/O block, taken by its recovery at boot and given back:
    # held whole; on an empty store nothing was read into it.
    conv = [p for p in pools if p.startswith("pool:      conv     1/1 free (lowest 0), 512 B "
                                             "blocks, internal; peak 512 B held, ")]
    assert len(conv) == 1, pools
    written = int(conv[0].split("held, ")[1].split(" B written")[0])
    assert written == 0, conv


CONNECTED_BOARD = ("board caps=wifi\n"
                   "wifi state=connected ssid=\"lab net\" ip=10.1.2.3 rssi=-61 channel=11\n")
NETWORK_BOARDS = {
    "connected": (CONNECTED_BOARD,
                  'network:   wifi connected to "lab net" (-61 dBm), 10.1.2.3'),
    "connecting": ("board caps=wifi\nwifi state=connecting\n",
                   "network:   wifi connecting, no address"),
    "no wifi": ("board\n", None),
}


@pytest.mark.sim_only("starts the simulator on board files of its own")
@pytest.mark.parametrize("case", sorted(NETWORK_BOARDS))
def test_status_network(sims, tmp_path, case: str) -> None:
    text, expected = NETWORK_BOARDS[case]
    board = tmp_path / "net.board"
    board.write_text(text)
    dut = sims.start([f"--board={board}"])
    lines = [x for x in dut.exec_command("agent status") if x.startswith("network:")]
    assert lines == ([expected] if expected else [])


@pytest.mark.sim_only("the simulator's default board (app/sim/host_sim.board)")
def test_status_network_default_board(dut: SimDevice) -> None:
    lines = [x for x in dut.exec_command("agent status") if x.startswith("network:")]
    assert lines == ['network:   wifi connected to "agent-lab" (-58 dBm), 192.168.4.20']
