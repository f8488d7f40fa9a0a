"""agent_host.testing.twister_tls: which images run the HTTPS (`tls`) tests under Twister, and
where they find the test CA the build compiled in."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_host.errors import DeviceError
from agent_host.testing.twister_tls import (
    TLS_MARKER,
    image_has_tls,
    image_test_ca,
    no_tls_reason,
    split_tls,
)
from agent_host.testserver.tls import CaFiles, write_ca


def build(tmp_path: Path, *lines: str) -> Path:
    """A build directory whose zephyr/.config holds @lines."""
    (tmp_path / "zephyr").mkdir(parents=True)
    (tmp_path / "zephyr" / ".config").write_text("".join(f"{x}\n" for x in lines))
    return tmp_path


def test_an_image_with_tls_sockets_has_tls(tmp_path: Path) -> None:
    assert image_has_tls(build(tmp_path, "CONFIG_NET_SOCKETS=y",
                               "CONFIG_NET_SOCKETS_SOCKOPT_TLS=y"))


@pytest.mark.parametrize("lines", [
    ("CONFIG_NET_SOCKETS=y", "# CONFIG_NET_SOCKETS_SOCKOPT_TLS is not set"),
    ("CONFIG_NET_SOCKETS=y",),
    ("CONFIG_NET_SOCKETS_SOCKOPT_TLS_EXTRA=y", "#CONFIG_NET_SOCKETS_SOCKOPT_TLS=y"),
])
def test_an_image_without_tls_sockets_has_none(tmp_path: Path, lines: tuple[str, ...]) -> None:
    assert not image_has_tls(build(tmp_path, *lines))


def test_a_build_without_dotconfig_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match="cannot tell whether the image has TLS"):
        image_has_tls(tmp_path)


def test_the_reason_names_the_file_the_option_and_the_scenario(tmp_path: Path) -> None:
    reason = no_tls_reason(tmp_path)
    assert str(tmp_path / "zephyr" / ".config") in reason
    assert "CONFIG_NET_SOCKETS_SOCKOPT_TLS=y" in reason and "agent.e2e.tls" in reason


def test_split_by_the_tls_marker() -> None:
    class Item:
        def __init__(self, *marks: str) -> None:
            self.marks = set(marks)

        def get_closest_marker(self, name: str) -> object | None:
            return object() if name in self.marks else None

    items = [Item(), Item(TLS_MARKER), Item("sim_only"), Item(TLS_MARKER, "sim_only")]
    keep, drop = split_tls(items)
    assert keep == [items[0], items[2]] and drop == [items[1], items[3]]


def test_the_test_ca_of_a_build(tmp_path: Path) -> None:
    made = write_ca(tmp_path / "agent-test-ca")
    assert image_test_ca(tmp_path) == made == CaFiles.in_directory(tmp_path / "agent-test-ca")


def test_a_build_without_the_test_ca_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match="-DAGENT_TEST_CA=ON"):
        image_test_ca(tmp_path)
    made = write_ca(tmp_path / "agent-test-ca")
    made.key_pem.unlink()
    with pytest.raises(DeviceError, match="no test CA"):
        image_test_ca(tmp_path)
