"""The e2e tests' shared check module gets pytest's assertion messages too; the `tls` marker
of the HTTPS tests, which Twister runs only on images with TLS; the `firmware_only` marker of
tests that measure the firmware itself, which run only under Twister."""

import os
from pathlib import Path

import pytest
from agent_host.testing.twister_device import under_twister
from agent_host.testing.twister_tls import TLS_MARKER, image_has_tls, no_tls_reason, split_tls

pytest.register_assert_rewrite("tool_checks")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{TLS_MARKER}: talks HTTPS to the test server; under Twister deselected "
        "for an image without TLS (agent_host.testing.twister_tls)")
    config.addinivalue_line(
        "markers", "firmware_only(reason): measures the Zephyr firmware itself (its kernel "
        "shell, its stacks); deselected on the simulator, with the reason printed")


#: The Kconfig option of each script runtime a test may be parametrized with (`lang`).
RUNTIME_OPTIONS = {"python": "CONFIG_AGENT_SCRIPT_PYTHON", "lua": "CONFIG_AGENT_SCRIPT_LUA"}


def image_dotconfig(config: pytest.Config) -> Path:
    """The Kconfig result of the image under test: Twister's build or the simulator's."""
    if under_twister(config.option):
        return Path(config.option.build_dir) / "zephyr" / ".config"
    repo = Path(__file__).resolve().parents[2]
    build = Path(os.environ.get("AGENT_SIM_BUILD_DIR", repo / "build" / "sim-asan"))
    return build / "generated" / ".config"


def deselect_missing_runtimes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the cases of a script runtime the image was built without (a test
    parametrized with `lang`), and say which; when the configuration cannot be read yet
    (the simulator is built by a fixture), every case stays."""
    try:
        lines = image_dotconfig(config).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    missing = {lang for lang, opt in RUNTIME_OPTIONS.items() if f"{opt}=y" not in lines}
    drop = [x for x in items
            if getattr(x, "callspec", None) is not None and x.callspec.params.get("lang") in missing]
    if not drop:
        return
    config.hook.pytest_deselected(items=drop)
    items[:] = [x for x in items if x not in drop]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"deselected {len(drop)} case(s) of script runtimes this image "
                            f"was built without: {', '.join(sorted(missing))}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under Twister, leave out the `tls` tests when the image has no TLS; on the simulator
    the `firmware_only` ones; everywhere the cases of a script runtime the image lacks; and
    say why."""
    deselect_missing_runtimes(config, items)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not under_twister(config.option):
        drop = [x for x in items if x.get_closest_marker("firmware_only") is not None]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = [x for x in items if x not in drop]
            for item in drop:
                mark = item.get_closest_marker("firmware_only")
                if reporter is not None and mark is not None:
                    reporter.write_line(f"deselected {item.nodeid} (firmware only): "
                                        f"{mark.args[0] if mark.args else ''}")
        return
    build_dir = Path(config.option.build_dir)
    if image_has_tls(build_dir):
        return
    keep, drop = split_tls(items)
    if not drop:
        return
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
    if reporter is not None:
        reporter.write_line(f"deselected {len(drop)} test(s) marked {TLS_MARKER}: "
                            f"{no_tls_reason(build_dir)}")
