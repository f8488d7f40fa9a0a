"""The HTTPS tests under Twister: whether the image has TLS, and the test CA it trusts.

The e2e tests that talk HTTPS carry the pytest marker ``tls``. On the host simulator they
always run: it has TLS (OpenSSL) and is told which CA to trust with ``--ca``. A Zephyr image
has TLS only when built with ``app/overlay-tls.conf`` and trusts only the roots compiled into
it, so under Twister:

- in an image without TLS (no ``CONFIG_NET_SOCKETS_SOCKOPT_TLS=y`` in the build's ``.config``)
  the ``tls`` tests are deselected, and the reason is printed (:func:`no_tls_reason`);
- in an image with TLS the tests need the test CA that the scenario's build made and compiled
  in (``AGENT_TEST_CA=ON`` in twister_tests/agent/CMakeLists.txt): ``agent-test-ca/ca.pem``
  and ``ca-key.pem`` in the build directory. The test server signs its certificates with it
  (:class:`agent_host.testserver.tls.CaFiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import DeviceError
from ..testserver.tls import CaFiles

#: The marker of the tests that talk HTTPS.
TLS_MARKER = "tls"

#: The Kconfig option of Zephyr's TLS sockets, which app/overlay-tls.conf turns on.
TLS_OPTION = "CONFIG_NET_SOCKETS_SOCKOPT_TLS"

#: Folder of the test CA in the build directory (twister_tests/agent/CMakeLists.txt).
TEST_CA_DIR = "agent-test-ca"


def dotconfig(build_dir: Path) -> Path:
    """The Kconfig result of a (non-sysbuild) Zephyr build: ``<build_dir>/zephyr/.config``."""
    return build_dir / "zephyr" / ".config"


def image_has_tls(build_dir: Path) -> bool:
    """Whether the image in @build_dir was built with TLS sockets.

    Raises:
        DeviceError: The build has no ``zephyr/.config``.
    """
    path = dotconfig(build_dir)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise DeviceError(f"cannot tell whether the image has TLS: {err}") from None
    return f"{TLS_OPTION}=y" in lines


def no_tls_reason(build_dir: Path) -> str:
    """Why the ``tls`` tests are deselected for the image in @build_dir."""
    return (f"the image has no TLS ({dotconfig(build_dir)} does not set {TLS_OPTION}=y; "
            "the scenario agent.e2e.tls builds with app/overlay-tls.conf and runs them)")


def split_tls(items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Split collected test items into (those without the ``tls`` marker, those with it)."""
    keep: list[Any] = []
    drop: list[Any] = []
    for item in items:
        (drop if item.get_closest_marker(TLS_MARKER) is not None else keep).append(item)
    return keep, drop


def image_test_ca(build_dir: Path) -> CaFiles:
    """The test CA compiled into the image in @build_dir.

    Raises:
        DeviceError: The build made none (it was not configured with ``AGENT_TEST_CA=ON``).
    """
    files = CaFiles.in_directory(build_dir / TEST_CA_DIR)
    if not files.cert_pem.is_file() or not files.key_pem.is_file():
        raise DeviceError(f"no test CA in {files.cert_pem.parent}: build the image with "
                          "-DAGENT_TEST_CA=ON (twister_tests/agent/CMakeLists.txt, the scenario "
                          "agent.e2e.tls)")
    return files
