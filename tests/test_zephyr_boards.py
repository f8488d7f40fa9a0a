"""The board files in app/boards/ through Zephyr's own devicetree and Kconfig tooling.

For every overlay the application ships, the board's devicetree plus the overlay is
preprocessed the way cmake/modules/dts.cmake does it (zephyr_dt_preprocess() in
cmake/modules/extensions.cmake: the C preprocessor with -x assembler-with-cpp -nostdinc, the
DTS_ROOT include folders of cmake/modules/pre_dt.cmake, every file passed with -include,
-undef -D__DTS__) and loaded with edtlib from the tree's scripts/dts/python-devicetree, with
Zephyr's bindings, as scripts/dts/gen_edt.py does; warnings are errors, as Twister builds
(--edtlib-Werror). The test then checks what the application relies on: a storage_partition
inside a flash, the fstab entry mounting it at /lfs, and on the ESP32-S3 an enabled psram0
of 8 MiB.

For the ESP32-S3 the configuration is also run through Zephyr's scripts/kconfig/kconfig.py
with the environment and the generated Kconfig files cmake/modules/kconfig.cmake,
hwm_v2.cmake, zephyr_module.cmake and dts.cmake prepare, over the board's defconfig,
app/prj.conf and the board's .conf (and once more with app/overlay-tls.conf), with
--handwritten-input-configs: an unknown symbol, a symbol without a prompt, or a value that
does not end up as written fails it, as it fails a real build. Every symbol our files set is
then compared with the resulting .config.

The Zephyr tree is $ZEPHYR_BASE, else ../shared/zephyr-4.3/zephyr beside the checkout (the
trimmed 4.3.0 tree). Without one, or without a board's devicetree in it, the test is skipped
on a developer machine and fails under CI (CI set), so CI never passes without running it.
"""

from __future__ import annotations

import importlib
import os
import pickle
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

REPO_DIR = Path(__file__).resolve().parents[1]
APP_DIR = REPO_DIR / "app"
APP_BOARDS = APP_DIR / "boards"
KIT_ZEPHYR = REPO_DIR.parent / "shared" / "zephyr-4.3" / "zephyr"

MIB = 1024 * 1024


@dataclass(frozen=True)
class Target:
    """A board target the application has board files for."""

    name: str  # the board target, e.g. "esp32s3_devkitc/esp32s3/procpu"
    board_dir: str  # relative to ZEPHYR_BASE

    @property
    def board(self) -> str:
        return self.name.split("/")[0]

    @property
    def qualifiers(self) -> list[str]:
        return self.name.split("/")[1:]

    def file_stems(self) -> list[str]:
        """Names Zephyr looks a board's files up by, full name first.

        cmake/modules/extensions.cmake, zephyr_build_string(): the target with "/" as "_",
        and, on a single-SoC board, the same without the SoC.
        """
        full = "_".join([self.board, *self.qualifiers])
        short = "_".join([self.board, *self.qualifiers[1:]])
        return [full] if short == full else [full, short]


#: app/boards/<stem>.overlay -> the target Zephyr applies it to (docs/zephyr-port.md, "Board
#: files"). A new overlay must be added here, or test_every_overlay_is_known fails.
TARGETS = {
    "native_sim": Target("native_sim/native", "boards/native/native_sim"),
    "native_sim_native_64": Target("native_sim/native/64", "boards/native/native_sim"),
    "mps2_an385": Target("mps2/an385", "boards/arm/mps2"),
    "esp32s3_devkitc_esp32s3_procpu": Target("esp32s3_devkitc/esp32s3/procpu",
                                             "boards/espressif/esp32s3_devkitc"),
}
ESP32S3 = "esp32s3_devkitc_esp32s3_procpu"


def _unavailable(reason: str) -> NoReturn:
    """Skips on a developer machine; fails under CI, where the tree must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


# ---- the tree ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    base: Path
    version: tuple[int, int, int]

    @property
    def modules_root(self) -> Path:
        return self.base.parent / "modules"


def _read_version(base: Path) -> tuple[int, int, int]:
    fields = dict(re.findall(r"^(\w+)\s*=\s*(\S*)", (base / "VERSION").read_text(), re.MULTILINE))
    return (int(fields["VERSION_MAJOR"]), int(fields["VERSION_MINOR"]),
            int(fields["PATCHLEVEL"]))


@pytest.fixture(scope="module")
def tree() -> Tree:
    env_base = os.environ.get("ZEPHYR_BASE")
    candidates = [Path(env_base)] if env_base else []
    candidates.append(KIT_ZEPHYR)
    for base in candidates:
        if (base / "VERSION").is_file() and (base / "scripts" / "dts").is_dir():
            return Tree(base.absolute(), _read_version(base))
    _unavailable("no Zephyr tree: set ZEPHYR_BASE or put the kit at ../shared/zephyr-4.3")


@pytest.fixture(scope="module")
def edtlib(tree: Tree) -> ModuleType:
    """The tree's own python-devicetree (as gen_edt.py puts it on sys.path)."""
    src = str(tree.base / "scripts" / "dts" / "python-devicetree" / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    for name in [m for m in sys.modules if m == "devicetree" or m.startswith("devicetree.")]:
        del sys.modules[name]
    module = importlib.import_module("devicetree.edtlib")
    assert Path(module.__file__ or "").is_relative_to(src), module.__file__
    return module


def _arch_names(tree: Tree) -> list[str]:
    """ARCH_V2_NAME_LIST: every architecture of arch/archs.yml (cmake/modules/hwm_v2.cmake)."""
    text = (tree.base / "arch" / "archs.yml").read_text()
    return re.findall(r"^\s*-\s*name:\s*(\S+)", text, re.MULTILINE)


# ---- devicetree -------------------------------------------------------------------------------


def _board_dts(tree: Tree, target: Target) -> Path | None:
    """DTS_SOURCE as dts.cmake picks it: <full name>.dts, else the SoC-less name."""
    board_dir = tree.base / target.board_dir
    for stem in target.file_stems():
        if (board_dir / f"{stem}.dts").is_file():
            return board_dir / f"{stem}.dts"
    return None


def _include_dirs(tree: Tree, target: Target) -> list[Path]:
    """DTS_ROOT_SYSTEM_INCLUDE_DIRS (cmake/modules/pre_dt.cmake) for the roots the app has:
    the application, the board folder and ZEPHYR_BASE."""
    roots: list[Path] = []
    for root in (APP_DIR, tree.base / target.board_dir, tree.base):
        if root.resolve() not in roots:
            roots.append(root.resolve())
    subdirs = ["include", "include/zephyr", "dts/common", "dts/vendor",
               *[f"dts/{arch}" for arch in _arch_names(tree)], "dts"]
    return [root / sub for root in roots for sub in subdirs if (root / sub).is_dir()]


def _bindings_dirs(tree: Tree) -> list[Path]:
    """DTS_ROOT_BINDINGS: <root>/dts/bindings of each DTS_ROOT that has one."""
    return [root / "dts" / "bindings" for root in (APP_DIR, tree.base)
            if (root / "dts" / "bindings").is_dir()]


def _preprocess(tree: Tree, target: Target, sources: list[Path], out: Path) -> None:
    cpp = shutil.which("gcc") or shutil.which("cc")
    if cpp is None:
        _unavailable("no C compiler to preprocess the devicetree with")
    cmd = [str(cpp), "-x", "assembler-with-cpp", "-nostdinc"]
    for inc in _include_dirs(tree, target):
        cmd += ["-isystem", str(inc)]
    for src in sources:
        cmd += ["-include", str(src)]
    cmd += ["-undef", "-D__DTS__", "-E", "-o", str(out), str(tree.base / "misc" / "empty_file.c")]
    done = subprocess.run(cmd, cwd=APP_DIR, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"preprocessing {[s.name for s in sources]} failed:\n{done.stderr}"


def _load_edt(tree: Tree, edtlib: ModuleType, stem: str, tmp: Path) -> Any:
    target = TARGETS[stem]
    dts = _board_dts(tree, target)
    if dts is None:
        _unavailable(f"{tree.base} has no devicetree for {target.name} "
                     f"({target.board_dir}/{target.file_stems()[-1]}.dts): the tree is trimmed")
    pre = tmp / f"{stem}.dts.pre"
    _preprocess(tree, target, [dts, APP_BOARDS / f"{stem}.overlay"], pre)
    vendor_prefixes: dict[str, str] = {}
    prefixes = tree.base / "dts" / "bindings" / "vendor-prefixes.txt"
    if prefixes.is_file():
        vendor_prefixes = edtlib.load_vendor_prefixes_txt(str(prefixes))
    try:
        return edtlib.EDT(str(pre), [str(d) for d in _bindings_dirs(tree)],
                          warn_reg_unit_address_mismatch=True,
                          default_prop_types=True,
                          infer_binding_for_paths=["/zephyr,user", "/cpus"],
                          werror=True,
                          vendor_prefixes=vendor_prefixes)
    except edtlib.EDTError as e:
        pytest.fail(f"edtlib rejects {target.name} with app/boards/{stem}.overlay: {e}")


class Edts:
    """EDTs loaded so far, by overlay stem (the Kconfig check reuses the ESP32-S3 one)."""

    def __init__(self, tree: Tree, edtlib: ModuleType, tmp: Path) -> None:
        self.tree = tree
        self.edtlib = edtlib
        self.tmp = tmp
        self.cache: dict[str, Any] = {}

    def get(self, stem: str) -> Any:
        if stem not in self.cache:
            self.cache[stem] = _load_edt(self.tree, self.edtlib, stem, self.tmp)
        return self.cache[stem]


@pytest.fixture(scope="module")
def edts(tree: Tree, edtlib: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Edts:
    return Edts(tree, edtlib, tmp_path_factory.mktemp("dts"))


def test_every_overlay_is_known() -> None:
    shipped = sorted(p.stem for p in APP_BOARDS.glob("*.overlay"))
    assert shipped == sorted(TARGETS), "app/boards/*.overlay and TARGETS differ"


def _ancestors(node: Any) -> Iterator[Any]:
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


@pytest.mark.parametrize("stem", sorted(TARGETS))
def test_devicetree_loads_with_storage_and_fstab(edts: Edts, stem: str) -> None:
    edt = edts.get(stem)

    part = edt.label2node.get("storage_partition")
    assert part is not None, "no storage_partition"
    assert part.status == "okay"
    flash = next((a for a in _ancestors(part) if "soc-nv-flash" in a.compats), None)
    assert flash is not None, f"{part.path} is not inside a soc-nv-flash node"
    assert part.regs and flash.regs
    base = flash.regs[0].addr
    offset = part.regs[0].addr - base if part.regs[0].addr >= base else part.regs[0].addr
    assert part.regs[0].size > 0
    assert offset + part.regs[0].size <= flash.regs[0].size, (
        f"{part.path} ({offset:#x} + {part.regs[0].size:#x}) runs past {flash.path} "
        f"({flash.regs[0].size:#x})")

    entries = edt.compat2okay.get("zephyr,fstab,littlefs", [])
    lfs = [n for n in entries if n.props["mount-point"].val == "/lfs"]
    assert len(lfs) == 1, "no single okay zephyr,fstab,littlefs entry mounting /lfs"
    entry = lfs[0]
    assert entry.parent is not None and "zephyr,fstab" in entry.parent.compats
    assert entry.props["partition"].val is part
    assert entry.props["automount"].val is True


def test_esp32s3_psram_is_enabled_with_8_mib(edts: Edts) -> None:
    edt = edts.get(ESP32S3)
    psram = edt.label2node.get("psram0")
    assert psram is not None
    assert psram.status == "okay"
    assert "espressif,esp32-psram" in psram.compats
    assert psram.props["size"].val == 8 * MIB


# ---- Kconfig (ESP32-S3) -----------------------------------------------------------------------

#: hal_espressif is not in the trimmed tree. What scripts/zephyr_module.py writes into
#: Kconfig.modules for it once `west blobs fetch hal_espressif` has fetched its blobs
#: (kconfig_module_opts(): the module symbol, and the _BLOBS symbol defaulting to y), so that
#: drivers needing the blobs (WIFI_ESP32) can be enabled. The hal's own zephyr/Kconfig is not
#: there: symbols only it defines are not checked.
HAL_ESPRESSIF_STANDIN = """
config ZEPHYR_HAL_ESPRESSIF_MODULE
	bool
	default y
	select TAINT_BLOBS

config ZEPHYR_HAL_ESPRESSIF_MODULE_BLOBS
	bool
	default y
"""


def _module_dirs(tree: Tree) -> list[Path]:
    """The modules of a west workspace around ZEPHYR_BASE (<base>/../modules/**)."""
    root = tree.modules_root
    if not root.is_dir():
        return []
    return sorted(p.parent.parent for p in root.glob("**/zephyr/module.yml"))


def _parse_list_hardware(text: str) -> list[dict[str, list[str]]]:
    """Lines of list_hardware.py --cmakeformat=TYPE;{TYPE};NAME;... as keyword lists."""
    items = []
    for line in text.splitlines():
        fields = line.split(";")
        item: dict[str, list[str]] = {}
        key = ""
        for field in fields:
            if field in ("TYPE", "NAME", "DIR", "HWM"):
                key = field
                item[key] = []
            elif key:
                item[key].append(field)
        if item:
            items.append(item)
    return items


def _osource_file(path: Path, comment: str, dirs: list[str], name: str) -> None:
    """kconfig_gen() of cmake/modules/hwm_v2.cmake."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# Load {comment} descriptions."]
    lines += [f'osource "{d}/{name}"' for d in dirs]
    path.write_text("\n".join(lines) + "\n")


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(cmd[:2])} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _conf_assignments(path: Path) -> dict[str, str]:
    """CONFIG_X=value lines of a .conf (and `# CONFIG_X is not set` as n)."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if m := re.fullmatch(r"(CONFIG_\w+)=(.*)", line):
            values[m.group(1)] = m.group(2)
        elif m := re.fullmatch(r"# (CONFIG_\w+) is not set", line):
            values[m.group(1)] = "n"
    return values


def _run_kconfig(tree: Tree, edt: Any, work: Path, inputs: list[Path]) -> dict[str, str]:
    target = TARGETS[ESP32S3]
    py = sys.executable
    kbin = work / "Kconfig"
    kbin.mkdir(parents=True)

    # EDT_PICKLE for the dt_* functions of scripts/kconfig/kconfigfunctions.py (gen_edt.py).
    pickle_path = work / "edt.pickle"
    with pickle_path.open("wb") as f:
        pickle.dump(edt, f, protocol=4)

    # Kconfig.dts (dts.cmake, gen_driver_kconfig_dts.py): DT_HAS_<compat>_ENABLED.
    bindings = [str(d) for d in _bindings_dirs(tree)]
    _run([py, str(tree.base / "scripts" / "dts" / "gen_driver_kconfig_dts.py"),
          "--kconfig-out", str(kbin / "Kconfig.dts"), "--bindings-dirs", *bindings], work)

    # Kconfig.modules and the module folders (zephyr_module.cmake, modules/modules.cmake).
    modules = _module_dirs(tree)
    module_env: dict[str, str] = {}
    kconfig_modules = kbin / "Kconfig.modules"
    if modules:
        settings = work / "zephyr_settings.txt"
        cmake_out = work / "zephyr_modules.txt"
        _run([py, str(tree.base / "scripts" / "zephyr_module.py"),
              f"--zephyr-base={tree.base}", "--modules", *[str(m) for m in modules],
              "--kconfig-out", str(kconfig_modules), "--cmake-out", str(cmake_out),
              "--settings-out", str(settings)], tree.base)
        for line in cmake_out.read_text().splitlines():
            if m := re.match(r'"([^"]+)":"([^"]+)"', line):
                upper = re.sub(r"[^A-Za-z0-9]", "_", m.group(1)).upper()
                module_env[f"ZEPHYR_{upper}_MODULE_DIR"] = m.group(2)
                in_tree = tree.base / "modules" / m.group(1) / "Kconfig"
                if in_tree.is_file():
                    module_env[f"ZEPHYR_{upper}_KCONFIG"] = str(in_tree)
    else:
        kconfig_modules.write_text("# No west and no Zephyr modules\n")
    if "ZEPHYR_HAL_ESPRESSIF_MODULE_DIR" not in module_env:
        with kconfig_modules.open("a") as f:
            f.write(HAL_ESPRESSIF_STANDIN)

    # arch/, soc/ and boards/ Kconfig sources (hwm_v2.cmake).
    hw = _parse_list_hardware(_run(
        [py, str(tree.base / "scripts" / "list_hardware.py"), f"--arch-root={tree.base}",
         f"--soc-root={tree.base}", "--archs", "--socs",
         "--cmakeformat=TYPE;{TYPE};NAME;{NAME};DIR;{DIR};HWM;{HWM}"], tree.base))
    arch_dirs = [d for item in hw if item.get("TYPE") == ["arch"] for d in item["DIR"]]
    soc_dirs: list[str] = []
    for item in hw:
        if item.get("TYPE", [""])[0] in ("soc", "series", "family"):
            soc_dirs += [d for d in item["DIR"] if d not in soc_dirs]
    board_dir = str(tree.base / target.board_dir)
    _osource_file(kbin / "arch" / "Kconfig", "Zephyr Arch Kconfig", arch_dirs, "Kconfig")
    for name, comment in (("Kconfig.defconfig", "Zephyr SoC defconfig"),
                          ("Kconfig", "Zephyr SoC Kconfig"), ("Kconfig.soc", "SoC Kconfig"),
                          ("Kconfig.sysbuild", "Sysbuild SoC Kconfig")):
        _osource_file(kbin / "soc" / name, comment, soc_dirs, name)
    for name, comment in (("Kconfig.defconfig", "Zephyr board defconfig"),
                          (f"Kconfig.{target.board}", "board Kconfig"),
                          ("Kconfig", "Zephyr board Kconfig"),
                          ("Kconfig.sysbuild", "Sysbuild board Kconfig")):
        _osource_file(kbin / "boards" / name, comment, [board_dir], name)

    # BOARD_QUALIFIERS: "/soc/cpu" before 4.4, "soc/cpu" from 4.4 (migration-guide-4.4.rst).
    qualifiers = "/".join(target.qualifiers)
    if tree.version < (4, 4, 0):
        qualifiers = "/" + qualifiers
    major, minor, patch = tree.version
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHON_EXECUTABLE": py,
        "ZEPHYR_BASE": str(tree.base),
        "srctree": str(tree.base),
        "KERNELVERSION": f"0x{major:02X}{minor:02X}{patch:02X}00",
        "APPVERSION": "", "APP_VERSION_EXTENDED_STRING": "", "APP_VERSION_TWEAK_STRING": "",
        "APP_DIR": str(APP_DIR),
        "CONFIG_": "CONFIG_",
        "KCONFIG_CONFIG": str(work / ".config"),
        "KCONFIG_BOARD_DIR": str(kbin / "boards"),
        "BOARD": target.board,
        "BOARD_REVISION": "",
        "BOARD_QUALIFIERS": qualifiers,
        "HWM_SCHEME": "v2",
        "KCONFIG_BINARY_DIR": str(kbin),
        "APPLICATION_SOURCE_DIR": str(APP_DIR),
        # The Zephyr SDK, which builds Xtensa images and has newlib and picolibc.
        "ZEPHYR_TOOLCHAIN_VARIANT": "zephyr",
        "TOOLCHAIN_KCONFIG_DIR": str(tree.base / "cmake" / "toolchain" / "zephyr"),
        "TOOLCHAIN_HAS_NEWLIB": "y",
        "TOOLCHAIN_HAS_PICOLIBC": "y",
        "EDT_PICKLE": str(pickle_path),
        "ARCH": "*",
        "ARCH_DIR": str(tree.base / "arch"),
        "SHIELD_AS_LIST": "",
        **module_env,
    }
    config = work / ".config"
    _run([py, str(tree.base / "scripts" / "kconfig" / "kconfig.py"),
          f"--zephyr-base={tree.base}", "--handwritten-input-configs",
          str(APP_DIR / "Kconfig"), str(config), str(work / "autoconf.h"),
          str(work / "sources.txt"), *[str(p) for p in inputs]], APP_DIR, env)
    return _conf_assignments(config)


@pytest.mark.parametrize("extra", [[], ["overlay-tls.conf"]], ids=["plain", "tls"])
def test_esp32s3_kconfig_takes_every_value_we_set(
        tree: Tree, edts: Edts, tmp_path: Path, extra: list[str]) -> None:
    target = TARGETS[ESP32S3]
    edt = edts.get(ESP32S3)
    board_dir = tree.base / target.board_dir
    defconfig = next((board_dir / f"{s}_defconfig" for s in target.file_stems()
                      if (board_dir / f"{s}_defconfig").is_file()), None)
    assert defconfig is not None, f"no defconfig for {target.name} in {board_dir}"
    # prj.conf, the board's .conf, then -DEXTRA_CONF_FILE (kconfig.cmake's merge order).
    ours = [APP_DIR / "prj.conf", APP_BOARDS / f"{ESP32S3}.conf", *[APP_DIR / e for e in extra]]

    final = _run_kconfig(tree, edt, tmp_path, [defconfig, *ours])

    wanted: dict[str, str] = {}
    for conf in ours:
        wanted.update(_conf_assignments(conf))
    wrong = {sym: (value, final.get(sym, "n")) for sym, value in wanted.items()
             if final.get(sym, "n") != value}
    assert not wrong, f"symbols set to (asked, got): {wrong}"

    # What the firmware needs, whichever file sets it.
    assert final.get("CONFIG_ESP_SPIRAM") == "y"
    assert final.get("CONFIG_ESP_SPIRAM_SIZE") == str(8 * MIB), "PSRAM size from psram0"
    assert final.get("CONFIG_SPIRAM_MODE_OCT") == "y"
    for sym in ("CONFIG_WIFI", "CONFIG_WIFI_ESP32", "CONFIG_NET_L2_WIFI_MGMT",
                "CONFIG_NET_L2_WIFI_SHELL", "CONFIG_WIFI_CREDENTIALS",
                "CONFIG_WIFI_CREDENTIALS_BACKEND_SETTINGS", "CONFIG_WIFI_CREDENTIALS_SHELL",
                "CONFIG_WIFI_CREDENTIALS_CONNECT_STORED", "CONFIG_NET_SOCKETS",
                "CONFIG_NET_DHCPV4", "CONFIG_DNS_RESOLVER"):
        assert final.get(sym) == "y", sym
    # The stored networks are read at POST_KERNEL/APPLICATION_INIT_PRIORITY (wifi_credentials.c
    # init()); the settings file they are in is only there once LittleFS has mounted /lfs.
    assert int(final["CONFIG_FILE_SYSTEM_INIT_PRIORITY"]) < int(
        final["CONFIG_APPLICATION_INIT_PRIORITY"])
    assert int(final["CONFIG_FILE_SYSTEM_INIT_PRIORITY"]) > int(
        final["CONFIG_FLASH_INIT_PRIORITY"])
