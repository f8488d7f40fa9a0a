"""The texts of the tool definitions (TOOL_TEXT, app/src/tools/packed_text.h): found in the
core's sources by scripts/tool_texts.py, packed with the reference pages by
scripts/gen_reference.py (docs/reference-format.md, "Tool texts"), and read back by the C
reader exactly as written, placeholders filled in."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"
TOOLS_DIR = REPO / "app" / "src" / "tools"
CORE_DIRS = [REPO / "app" / "src" / d for d in (
    "agent/state", "agent/wire", "tools", "script", "modules", "agent/store",
    "agent/provider", "agent/request", "agent/shell", "agent/mgmt")]


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # gen_reference.py imports tool_texts.py
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


TT = _load("tool_texts")
GEN = _load("gen_reference")
GEN_CONFIG = _load("gen_config")


def every_tool_config(tmp_path: Path) -> Path:
    """The simulator's configuration with both script runtimes: every tool is built."""
    extra = tmp_path / "every.conf"
    extra.write_text("CONFIG_AGENT_SCRIPT_LUA=y\nCONFIG_AGENT_SCRIPT_PYTHON=y\n")
    kconf = GEN_CONFIG.load(REPO / "app" / "Kconfig", [REPO / "app" / "sim" / "sim.conf", extra],
                            REPO / "app" / "sim")
    dotconfig = tmp_path / ".config"
    dotconfig.write_text(GEN_CONFIG.dotconfig_text(kconf))
    return dotconfig


# ---- Finding the texts ---------------------------------------------------------------------

def test_the_sources_name_every_tool_text_once() -> None:
    texts = TT.find_texts(CORE_DIRS)
    assert len(texts) >= 100
    assert len({t.ident for t in texts}) == len(texts)
    assert all(t.text for t in texts)
    # A definition's texts are TOOL_TEXTs: no plain literal is left in a tool definition.
    for folder in CORE_DIRS:
        for path in folder.glob("*.c"):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                for member in (".description = \"", ".output = \"", ".keywords = \""):
                    assert member not in line, f"{path}:{number}: {member}... is not a TOOL_TEXT"


def test_every_placeholder_fills_when_every_tool_is_built(tmp_path: Path) -> None:
    config = GEN.load_dotconfig(every_tool_config(tmp_path))
    texts = TT.fill(TT.find_texts(CORE_DIRS), config)
    assert [t.where for t in texts if "{{" in t.text] == []
    storage_read = next(t for t in texts if "Read a text file: up to" in t.text)
    assert config["CONFIG_AGENT_STORAGE_IO_MAX_LEN"] in storage_read.text


def test_literals_join_and_unescape_as_the_compiler_would(tmp_path: Path) -> None:
    src = ('/* TOOL_TEXT(in_comment, "no") */\n'
           '#define TOOL_TEXT(id, literal) (&packed_text_##id)\n'
           '#define SHAPE TOOL_TEXT(shape, \\\n\t"{a, " \\\n\t"b}")\n'
           'x = TOOL_TEXT(joined, "tab\\there \\"quoted\\" "  // a comment\n'
           '              "back\\\\slash \\x41 http://x /* not a comment */");\n')
    texts = TT.parse_source(tmp_path / "x.c", src)
    assert [(t.ident, t.text) for t in texts] == [
        ("shape", "{a, b}"),
        ("joined", 'tab\there "quoted" back\\slash A http://x /* not a comment */'),
    ]
    assert texts[1].where == f"{tmp_path / 'x.c'}:6"


@pytest.mark.parametrize("src, message", [
    ('TOOL_TEXT(a, "x" STORAGE_STR(CONFIG_X) "y")', "only string literals"),
    ('TOOL_TEXT(a "x")', "needs a comma"),
    ('TOOL_TEXT("x")', "needs an identifier"),
    ('TOOL_TEXT(a, some_macro)', "needs string literals"),
    ('TOOL_TEXT(a, "\\u00e9")', "the escape \\u"),
    ('TOOL_TEXT(a, "\\xe9")', "two hex digits of an ASCII byte"),
    ('TOOL_TEXT(a, "\\x41BC")', "not followed by another hex digit"),
    ('TOOL_TEXT(a, "open\n")', "does not end on its line"),
])
def test_what_the_reader_refuses_is_named_with_its_line(tmp_path: Path, src: str,
                                                         message: str) -> None:
    with pytest.raises(TT.TextError) as err:
        TT.parse_source(tmp_path / "y.c", "\n" + src + "\n")
    assert len(err.value.problems) == 1
    assert err.value.problems[0].startswith(f"{tmp_path / 'y.c'}:2: ")
    assert message in err.value.problems[0]


def test_a_use_inside_a_string_or_character_literal_is_no_use(tmp_path: Path) -> None:
    src = ('const char *hint = "write TOOL_TEXT(id, \\"x\\") here";\n'
           "char q = '\"'; p = TOOL_TEXT(real, \"yes\");\n")
    assert [(t.ident, t.text) for t in TT.parse_source(tmp_path / "z.c", src)] == [
        ("real", "yes")]


def test_an_identifier_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text('p = TOOL_TEXT(same, "one");\n')
    (tmp_path / "b.h").write_text('\n#define Q TOOL_TEXT(same, "two")\n')
    with pytest.raises(TT.TextError) as err:
        TT.find_texts([tmp_path])
    assert err.value.problems == [
        f"{tmp_path / 'b.h'}:2: TOOL_TEXT(same, ...) is also at {tmp_path / 'a.c'}:1"]


def test_an_unset_symbol_leaves_its_placeholder_and_a_long_text_is_refused() -> None:
    texts = [TT.ToolText("a", "up to {{CONFIG_A}} of {{CONFIG_B}} in {{CONFIG_C}}", "f.c:1")]
    filled = TT.fill(texts, {"CONFIG_A": "64", "CONFIG_B": "n"})
    assert filled[0].text == "up to 64 of {{CONFIG_B}} in {{CONFIG_C}}"
    assert TT.fill([TT.ToolText("b", "x" * TT.TEXT_MAX, "g.c:2")], {})[0].text == "x" * TT.TEXT_MAX
    with pytest.raises(TT.TextError) as err:
        TT.fill([TT.ToolText("b", "x" * (TT.TEXT_MAX + 1), "g.c:2")], {})
    assert err.value.problems == [f"g.c:2: TOOL_TEXT(b, ...) is longer than {TT.TEXT_MAX} bytes"]


# ---- Packing and reading back ----------------------------------------------------------------

DUMP_C = r"""
#include <stdio.h>
#include "packed_text.h"

static const struct packed_text *const texts[] = {
%s
};

int main(void)
{
	static char buf[PACKED_TEXT_LEN_MAX + 1];

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const char *s = packed_text_str(texts[i], buf, sizeof(buf));

		printf("%%u %%s%%c", (unsigned int)texts[i]->codes, s, 0);
	}
	return 0;
}
"""


def test_every_text_reads_back_through_the_c_reader(tmp_path: Path) -> None:
    """Generated for the configuration with every tool, compiled with the C reader: each text
    reads back byte for byte, packed (at least one code) or empty; and together they take
    well under half their bytes, the dictionary shared with the pages included."""
    dotconfig = every_tool_config(tmp_path)
    out = tmp_path / "gen"
    args = [arg for d in CORE_DIRS for arg in ("--texts-from", str(d))]
    assert GEN.main(["--dotconfig", str(dotconfig), *args, "--texts-c", str(out / "packed_texts.c"),
                     "--texts-h", str(out / "packed_texts.h")]) == 0
    texts = TT.fill(TT.find_texts(CORE_DIRS), GEN.load_dotconfig(dotconfig))
    main_c = tmp_path / "dump.c"
    main_c.write_text(DUMP_C % "\n".join(f"\t&packed_text_{t.ident}," for t in texts))
    exe = tmp_path / "dump"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{TOOLS_DIR}",
                    f"-I{out}", "-o", str(exe), str(main_c), str(out / "packed_texts.c"),
                    str(TOOLS_DIR / "packed_text.c"), str(TOOLS_DIR / "text_reader.c")],
                   check=True)
    dump = subprocess.run([str(exe)], capture_output=True, check=True).stdout
    entries = dump.split(b"\0")[:-1]
    assert len(entries) == len(texts)
    packed = 0
    for t, entry in zip(texts, entries, strict=True):
        codes, _, text = entry.partition(b" ")
        assert text == t.text.encode(), t.where
        assert int(codes) > 0
        packed += (int(codes) * GEN.CODE_BITS + 7) // 8
    # The sources are named relative to the repository: the output does not depend on where
    # the checkout is.
    source = (out / "packed_texts.c").read_text()
    assert str(REPO) not in source and "/* app/src/tools/tools_gpio.c:" in source
    header = (out / "packed_texts.h").read_text()
    longest = max(len(t.text.encode()) for t in texts)
    assert f"#define PACKED_TEXT_LEN_MAX {longest}\n" in header
    assert packed * 2 < sum(len(t.text.encode()) for t in texts)


def test_a_plain_build_keeps_the_literal(tmp_path: Path) -> None:
    """AGENT_PLAIN_TOOL_TEXTS (fuzz targets, compile-only tests): TOOL_TEXT is the literal."""
    main_c = tmp_path / "plain.c"
    main_c.write_text('#include <stdio.h>\n#include "packed_text.h"\n'
                      'static const struct packed_text *const t = TOOL_TEXT(any, "as {{IS}}");\n'
                      'int main(void) { printf("%u %s", (unsigned int)t->codes, '
                      'packed_text_str(t, NULL, 0)); return 0; }\n')
    exe = tmp_path / "plain"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-DAGENT_PLAIN_TOOL_TEXTS",
                    f"-I{TOOLS_DIR}", "-o", str(exe), str(main_c),
                    str(TOOLS_DIR / "packed_text.c"), str(TOOLS_DIR / "text_reader.c"),
                    "-Wl,--defsym=packed_text_codec=0"], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True,
                          check=True).stdout == "0 as {{IS}}"
