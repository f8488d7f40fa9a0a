"""The e2e tests' shared check module gets pytest's assertion messages too; the `tls` marker
of the HTTPS tests, which Twister runs only on images with TLS."""

from pathlib import Path

import pytest
from agent_host.testing.twister_device import under_twister
from agent_host.testing.twister_tls import TLS_MARKER, image_has_tls, no_tls_reason, split_tls

pytest.register_assert_rewrite("tool_checks")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{TLS_MARKER}: talks HTTPS to the test server; under Twister deselected "
        "for an image without TLS (agent_host.testing.twister_tls)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under Twister, leave out the `tls` tests when the image has no TLS, and say why."""
    if not under_twister(config.option):
        return
    build_dir = Path(config.option.build_dir)
    if image_has_tls(build_dir):
        return
    keep, drop = split_tls(items)
    if not drop:
        return
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"deselected {len(drop)} test(s) marked {TLS_MARKER}: "
                            f"{no_tls_reason(build_dir)}")
