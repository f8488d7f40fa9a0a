"""scripts/gen_reference.py: the reference registry of `man` and firmware_reference.

The pages of docs/reference/ are checked and generated for the simulator's configuration; the
C output is compiled and read back; every validation rule is broken once on a page made
here; the Kconfig filter and the placeholders are checked against small .config files; and
the output is the same whatever the order the pages are found in.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_DIR = Path(__file__).resolve().parents[1]
SCRIPT = REPO_DIR / "scripts" / "gen_reference.py"
PAGES_DIR = REPO_DIR / "docs" / "reference"
TOOLS_DIR = REPO_DIR / "app" / "src" / "tools"
KCONFIG_FILES = [REPO_DIR / "app" / "Kconfig", REPO_DIR / "app" / "sim" / "Kconfig.zephyr"]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(REPO_DIR / "scripts"))  # gen_reference.py imports tool_texts.py
GEN = _load("gen_reference", SCRIPT)
GEN_CONFIG = _load("gen_config", REPO_DIR / "scripts" / "gen_config.py")


#: Both script runtimes on, whatever sim.conf says: the pages of every Kconfig gate are built.
BOTH_RUNTIMES = "CONFIG_AGENT_SCRIPT_LUA=y\nCONFIG_AGENT_SCRIPT_PYTHON=y\n"


def sim_dotconfig(tmp_path: Path, extra: str = "") -> Path:
    """The simulator's .config (app/Kconfig with app/sim/sim.conf), plus ``extra`` lines."""
    confs = [REPO_DIR / "app" / "sim" / "sim.conf"]
    if extra:
        frag = tmp_path / "extra.conf"
        frag.write_text(extra)
        confs.append(frag)
    kconf = GEN_CONFIG.load(REPO_DIR / "app" / "Kconfig", confs, REPO_DIR / "app" / "sim")
    out = tmp_path / ".config"
    out.write_text(GEN_CONFIG.dotconfig_text(kconf))
    return out


def page(topic: str = "demo", *, summary: str = "A demo page", keywords: str = "[demo, test]",
         requires: str = "[]", body: str = "# demo\n\nBody text.\n",
         contract: str = "demo -> ok\n", extra_front: str = "") -> str:
    return (f"---\ntopic: {topic}\nsummary: {summary}\nkeywords: {keywords}\n"
            f"requires: {requires}\n{extra_front}---\n{body}\n## Contract\n\n{contract}")


def write_pages(directory: Path, pages: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def problems_of(pages_dir: Path) -> list[str]:
    with pytest.raises(GEN.ReferenceError) as info:
        GEN.load_pages(pages_dir)
    problems: list[str] = info.value.problems
    return problems


def one_problem(tmp_path: Path, text: str | bytes) -> str:
    """The single problem a page made of ``text`` has."""
    path = tmp_path / "pages" / "p.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    problems = problems_of(path.parent)
    assert len(problems) == 1, problems
    return problems[0]


# ---- The pages of the repository ---------------------------------------------------------------

def _kconfig_symbols() -> set[str]:
    names: set[str] = set()
    for path in KCONFIG_FILES:
        found = re.findall(r"^config (\w+)", path.read_text(), re.MULTILINE)
        names |= {f"CONFIG_{m}" for m in found}
    return names


def test_repository_pages_are_valid_and_name_real_symbols() -> None:
    pages = GEN.load_pages(PAGES_DIR)
    topics = [p.topic for p in pages]
    for topic in ("agent", "agent-config", "agent-ask", "agent-tools", "storage-tools", "gpio",
                  "hardware", "jobs", "man", "littlefs", "settings", "tls", "shell",
                  "lua-device", "lua-files", "lua-gpio", "lua-sensors", "python-device",
                  "python-files", "python-gpio", "python-sensors"):
        assert topic in topics
    known = _kconfig_symbols()
    for p in pages:
        assert set(p.requires) <= known, (p.path, p.requires)
        text = p.summary + p.body + p.contract
        for symbol in re.findall(r"\{\{(\w+)\}\}", text):
            assert symbol in known, (p.path, symbol)
        # The page's body starts with its title line, as `man TOPIC` shows it.
        assert p.body.startswith(f"# {p.topic} - "), p.path


def test_simulator_configuration_keeps_every_page(tmp_path: Path) -> None:
    gen = GEN.generate(PAGES_DIR, sim_dotconfig(tmp_path, BOTH_RUNTIMES))
    assert gen.topics == sorted(p.stem for p in PAGES_DIR.glob("*.md"))
    assert f"#define REFERENCE_PAGE_COUNT {len(gen.topics)}" in gen.header
    assert "{{" not in gen.source


def test_tool_families_turned_off_drop_their_pages(tmp_path: Path) -> None:
    dotconfig = sim_dotconfig(tmp_path, "CONFIG_AGENT_TOOLS_STORAGE=n\n"
                              "CONFIG_AGENT_TOOLS_HARDWARE=n\nCONFIG_AGENT_TOOLS_JOBS=n\n")
    topics = GEN.generate(PAGES_DIR, dotconfig).topics
    for gone in ("storage-tools", "gpio", "hardware", "jobs"):
        assert gone not in topics
    assert "agent" in topics and "man" in topics


def test_placeholders_take_the_configured_values(tmp_path: Path) -> None:
    dotconfig = sim_dotconfig(tmp_path, "CONFIG_AGENT_STORAGE_IO_MAX_LEN=2000\n")
    pages = {p.topic: p for p in GEN.select_pages(GEN.load_pages(PAGES_DIR),
                                                  GEN.load_dotconfig(dotconfig))}
    assert "content 0..2000}" in pages["storage-tools"].contract
    assert "3072" not in pages["storage-tools"].contract
    assert "(at most 3)" in pages["man"].contract


DUMP_C = r"""
#include <stdio.h>
#include <string.h>
#include "reference_pages.h"

/* One field through the reader, in pieces of 7 bytes; 1 when it is not its length. */
static int dump(const struct reference_page *p, enum reference_field field, size_t len)
{
	struct reference_reader r;
	char piece[7];
	size_t n;
	size_t total = 0;

	reference_open(&r, p, field);
	while ((n = reference_read(&r, piece, sizeof(piece))) > 0) {
		fwrite(piece, 1, n, stdout);
		total += n;
	}
	return total != len || r.corrupt;
}

int main(void)
{
	printf("%zu\n", reference_page_count);
	for (size_t i = 0; i < reference_page_count; i++) {
		const struct reference_page *p = &reference_pages[i];

		printf("%s\n%s\n%s\n", p->topic, p->summary, p->keywords);
		if (dump(p, REFERENCE_BODY, p->body_len)) {
			return 1;
		}
		printf("\n--\n");
		if (dump(p, REFERENCE_CONTRACT, p->contract_len)) {
			return 1;
		}
		printf("\n==\n");
	}
	return 0;
}
"""


def compile_and_dump(tmp_path: Path, pages_dir: Path, dotconfig: Path,
                     extra: tuple[str, ...] = ()) -> str:
    """The pages as the generated C holds them, read back through reference_read()."""
    out_c, out_h = tmp_path / "out" / "reference_pages.c", tmp_path / "out" / "reference_pages.h"
    assert GEN.main(["--pages", str(pages_dir), "--dotconfig", str(dotconfig),
                     "--out-c", str(out_c), "--out-h", str(out_h), *extra]) == 0
    main_c = tmp_path / "dump.c"
    main_c.write_text(DUMP_C)
    exe = tmp_path / "dump"
    # -pedantic: no string literal beyond C11's 4095 characters, no extensions.
    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-DCONFIG_AGENT_TOOLS_REFERENCE", f"-I{TOOLS_DIR}", f"-I{out_c.parent}",
                    "-o", str(exe), str(main_c), str(out_c), str(TOOLS_DIR / "reference.c"),
                    str(TOOLS_DIR / "text_reader.c")],
                   check=True)
    return subprocess.run([str(exe)], capture_output=True, check=True).stdout.decode()


def expected_dump(pages: list[object]) -> str:
    """What DUMP_C prints for ``pages`` (gen_reference.Rendered)."""
    out = [f"{len(pages)}\n"]
    for p in pages:
        out.append(f"{p.topic}\n{p.summary}\n{' '.join(p.keywords)}\n"  # type: ignore[attr-defined]
                   f"{p.body}\n--\n{p.contract}\n==\n")  # type: ignore[attr-defined]
    return "".join(out)


def test_generated_c_holds_the_pages_exactly(tmp_path: Path) -> None:
    body = '# odd - text\n\nQuotes " and \\ backslash, UTF-8 é € 😀, ??= trigraph, tab-free.\n'
    pages = write_pages(tmp_path / "pages", {
        "odd.md": page("odd", summary="Odd \"text\" é", body=body,
                       contract='a "b" \\c\n\nd\n'),
        "plain.md": page("plain"),
    })
    dump = compile_and_dump(tmp_path, pages, sim_dotconfig(tmp_path))
    assert dump == ("2\n"
                    "odd\nOdd \"text\" é\ndemo test\n" + body.rstrip("\n") + "\n--\n"
                    'a "b" \\c\n\nd\n==\n'
                    "plain\nA demo page\ndemo test\n# demo\n\nBody text.\n--\ndemo -> ok\n==\n")


def test_repository_pages_compile_pedantic(tmp_path: Path) -> None:
    dotconfig = sim_dotconfig(tmp_path, BOTH_RUNTIMES)
    dump = compile_and_dump(tmp_path, PAGES_DIR, dotconfig)
    assert dump.startswith(f"{len(list(PAGES_DIR.glob('*.md')))}\n")
    # Every page, packed, reads back through the C reader as its text, byte for byte.
    kept = GEN.select_pages(GEN.load_pages(PAGES_DIR), GEN.load_dotconfig(dotconfig))
    assert dump == expected_dump(kept)
    assert compile_and_dump(tmp_path, PAGES_DIR, dotconfig, ("--plain",)) == dump


# ---- Packed text (docs/reference-format.md "Packed text") --------------------------------------

def test_packing_round_trips_every_page_and_keeps_its_bounds(tmp_path: Path) -> None:
    kept = GEN.select_pages(GEN.load_pages(PAGES_DIR),
                            GEN.load_dotconfig(sim_dotconfig(tmp_path, BOTH_RUNTIMES)))
    texts = [t.encode() for p in kept for t in (p.body, p.contract)]
    codec, codes = GEN.pack(texts)
    assert [GEN.unpack(codec, c) for c in codes] == texts
    assert len(codec.literals) + len(codec.pairs) <= GEN.CODES
    assert codec.literals == bytes(sorted(set(b"".join(texts))))
    depth = [0] * len(codec.literals)
    for code, (left, right) in enumerate(codec.pairs, start=len(codec.literals)):
        assert left < code and right < code  # what the C reader requires
        depth.append(max(depth[left], depth[right]) + 1)
    assert max(depth) <= GEN.CODEC_DEPTH
    # Packing pays: the codes and the table are well under half the text.
    flat = [code for pair in codec.pairs for code in pair]
    packed = (sum(len(GEN.pack_bits(c)) for c in codes) + len(codec.literals)
              + len(GEN.pack_bits(flat)))
    assert packed * 10 < sum(map(len, texts)) * 5, (packed, sum(map(len, texts)))


def _pack_plainly(texts: list[bytes], codes: int) -> tuple[list[tuple[int, int]], list[list[int]]]:
    """pack() written the plain way: every pair counted again after each replacement."""
    literals = bytes(sorted(set(b"".join(texts))))
    seqs = [[literals.index(b) for b in text] for text in texts]
    depth = [0] * len(literals)
    pairs: list[tuple[int, int]] = []
    while len(literals) + len(pairs) < codes:
        counts: dict[tuple[int, int], int] = {}
        for seq in seqs:
            for pair in itertools.pairwise(seq):
                counts[pair] = counts.get(pair, 0) + 1
        allowed = [(-n, pair) for pair, n in counts.items()
                   if max(depth[pair[0]], depth[pair[1]]) < GEN.CODEC_DEPTH]
        if not allowed:
            break
        best = min(allowed)[1]
        code = len(literals) + len(pairs)
        replaced = 0
        new_seqs: list[list[int]] = []
        for seq in seqs:
            out: list[int] = []
            i = 0
            while i < len(seq):
                if seq[i:i + 2] == list(best):
                    out.append(code)
                    replaced += 1
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            new_seqs.append(out)
        if replaced < GEN.PAIR_MIN_USES:
            break
        seqs = new_seqs
        pairs.append(best)
        depth.append(max(depth[best[0]], depth[best[1]]) + 1)
    return pairs, seqs


def test_packing_equals_the_plain_algorithm() -> None:
    """pack() keeps its pair counts up to date around each replacement instead of counting
    again; on random texts of few letters (many ties, runs, overlaps) and every code budget it
    makes the same table and codes as counting again each time."""
    rnd = random.Random(16)
    for _ in range(300):
        texts = [bytes(rnd.choice(b"ab c\nxy") for _ in range(rnd.randint(0, 300)))
                 for _ in range(rnd.randint(1, 5))]
        budget = rnd.choice([256, 300, GEN.CODES])
        codec, codes = GEN.pack(texts, budget)
        assert (codec.pairs, codes) == _pack_plainly(texts, budget)


def test_codes_are_packed_least_significant_bit_first() -> None:
    assert GEN.pack_bits([1, 2, 1023], 10) == bytes([0x01, 0x08, 0xF0, 0x3F])
    assert GEN.pack_bits([], 10) == b""
    assert GEN.pack_bits([0xAB], 8) == b"\xab"
    with pytest.raises(ValueError):
        GEN.pack_bits([1024], 10)


def test_packing_stops_at_the_depth_bound() -> None:
    # One letter repeated: each new pair doubles the last one and is one level deeper.
    codec, codes = GEN.pack([b"x" * (1 << 20)])
    assert len(codec.pairs) == GEN.CODEC_DEPTH
    assert GEN.unpack(codec, codes[0]) == b"x" * (1 << 20)


def test_packing_keeps_only_pairs_used_three_times() -> None:
    assert GEN.pack([b"abab"])[0].pairs == []  # twice: the table would cost what it saves
    assert GEN.pack([b"ababab"])[0].pairs == [(0, 1)]


def search_c(tmp_path: Path, out: Path, queries: list[str]) -> list[str]:
    """reference_search() over the generated registry in ``out``: topics and scores."""
    main_c = tmp_path / "search.c"
    main_c.write_text(r"""
#include <stdio.h>
#include <string.h>
#include "reference.h"

int main(void)
{
	char line[512];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct reference_hit hits[64];
		size_t total;
		size_t n = reference_search(reference_builtin(), line, strlen(line), hits, 64, &total);

		printf("%zu", total);
		for (size_t i = 0; i < n; i++) {
			printf(" %s=%u", hits[i].page->topic, (unsigned int)hits[i].score);
		}
		printf("\n");
	}
	return 0;
}
""")
    exe = tmp_path / f"search-{out.name}"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-DCONFIG_AGENT_TOOLS_REFERENCE",
                    f"-I{TOOLS_DIR}", f"-I{out}", "-o", str(exe), str(main_c),
                    str(out / "reference_pages.c"), str(TOOLS_DIR / "reference.c"),
                    str(TOOLS_DIR / "text_reader.c")], check=True)
    return subprocess.run([str(exe)], input="\n".join(queries) + "\n", capture_output=True,
                          text=True, check=True).stdout.split("\n")


def test_search_over_packed_pages_equals_search_over_the_text(tmp_path: Path) -> None:
    dotconfig = sim_dotconfig(tmp_path, BOTH_RUNTIMES)
    for name, extra in (("packed", ()), ("plain", ("--plain",))):
        assert GEN.main(["--pages", str(PAGES_DIR), "--dotconfig", str(dotconfig),
                         "--out-c", str(tmp_path / name / "reference_pages.c"),
                         "--out-h", str(tmp_path / name / "reference_pages.h"), *extra]) == 0
    kept = GEN.select_pages(GEN.load_pages(PAGES_DIR), GEN.load_dotconfig(dotconfig))
    words = sorted({w for p in kept for w in re.findall(r"[A-Za-z0-9_]+", p.body + p.contract)})
    # Every word of the pages alone, and in threes; the task queries of the tests above.
    queries = words + [" ".join(words[i:i + 3]) for i in range(0, len(words), 3)]
    queries += [*TASK_QUERIES, *TOOL_QUERIES]
    packed = search_c(tmp_path, tmp_path / "packed", queries)
    plain = search_c(tmp_path, tmp_path / "plain", queries)
    assert len(packed) == len(queries) + 1
    assert packed == plain
    assert sum(1 for line in packed if line not in ("", "0")) > len(words) / 2


def test_no_page_still_compiles(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {
        "gated.md": page("gated", requires="[CONFIG_AGENT_TOOLS_STORAGE]"),
    })
    dotconfig = sim_dotconfig(tmp_path, "CONFIG_AGENT_TOOLS_STORAGE=n\n")
    assert compile_and_dump(tmp_path, pages, dotconfig) == "0\n"


# ---- The scripting pages (docs/scripting.md) ---------------------------------------------------

SCRIPT_API_C = REPO_DIR / "app" / "src" / "script" / "script_api.c"
SCRIPTING_MD = REPO_DIR / "docs" / "scripting.md"
LANG_PAGES = {"lua": ["lua-device", "lua-files", "lua-gpio", "lua-sensors"],
              "python": ["python-device", "python-files", "python-gpio", "python-sensors"]}


def api_table() -> list[tuple[str, str]]:
    """(name, signature) of every entry of the device API table, in its order."""
    table = SCRIPT_API_C.read_text().split("static const struct script_fn api[] = {", 1)[1]
    found = re.findall(r'^\t\{"(\w+)", "(\w+)\(', table.split("};", 1)[0], re.MULTILINE)
    assert found and all(name == sig for name, sig in found), found
    return [(name, sig) for name, sig in found]


@pytest.mark.parametrize("lang", ["lua", "python"])
def test_script_pages_follow_their_runtime(tmp_path: Path, lang: str) -> None:
    other = "python" if lang == "lua" else "lua"
    dotconfig = sim_dotconfig(tmp_path, f"{BOTH_RUNTIMES}CONFIG_AGENT_SCRIPT_{other.upper()}=n\n")
    topics = GEN.generate(PAGES_DIR, dotconfig).topics
    assert set(LANG_PAGES[lang]) <= set(topics)
    assert not set(LANG_PAGES[other]) & set(topics)
    none = sim_dotconfig(tmp_path, "CONFIG_AGENT_SCRIPT_LUA=n\nCONFIG_AGENT_SCRIPT_PYTHON=n\n"
                         "CONFIG_AGENT_SCRIPT_TEST_HOOKS=n\n")
    topics = GEN.generate(PAGES_DIR, none).topics
    assert not [t for t in topics if t.startswith(("lua-", "python-"))]


def test_device_pages_name_every_function_of_the_api_table(tmp_path: Path) -> None:
    """script_api.c's table is the single source of truth: each language's device page and
    docs/scripting.md's table name every function, and no other."""
    names = [name for name, _ in api_table()]
    assert len(names) == 15
    pages = {p.topic: p for p in GEN.select_pages(
        GEN.load_pages(PAGES_DIR), GEN.load_dotconfig(sim_dotconfig(tmp_path, BOTH_RUNTIMES)))}
    for topic in ("lua-device", "python-device"):
        # The functions follow the path rules ("... settings store refused.").
        functions = pages[topic].contract.split("refused.\n", 1)[1]
        functions = functions.split("\nSkeleton:\n", 1)[0]
        listed = re.findall(r"^(\w+)\(", functions, re.MULTILINE)
        listed += re.findall(r"[;,] (\w+)\(", functions)
        listed = [n for n in listed if n != "print"]  # "print() is the output"
        assert sorted(listed) == sorted(names), topic
    rows = re.findall(r"^\| `(\w+)\(", SCRIPTING_MD.read_text(), re.MULTILINE)
    assert rows == names


def rank_c(tmp_path: Path, queries: list[str]) -> dict[str, list[str]]:
    """The topics reference_search() (app/src/tools/reference.c) ranks first for each query
    over the repository's pages with both runtimes built in, at most three as
    firmware_reference returns."""
    out = tmp_path / "out"
    assert GEN.main(["--pages", str(PAGES_DIR), "--dotconfig",
                     str(sim_dotconfig(tmp_path, BOTH_RUNTIMES)),
                     "--out-c", str(out / "reference_pages.c"),
                     "--out-h", str(out / "reference_pages.h")]) == 0
    main_c = tmp_path / "rank.c"
    main_c.write_text(r"""
#include <stdio.h>
#include <string.h>
#include "reference.h"

int main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++) {
		struct reference_hit hits[3];
		size_t n = reference_search(reference_builtin(), argv[a], strlen(argv[a]), hits, 3,
					    NULL);

		for (size_t i = 0; i < n; i++) {
			printf("%s%s", i > 0 ? " " : "", hits[i].page->topic);
		}
		printf("\n");
	}
	return 0;
}
""")
    exe = tmp_path / "rank"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-DCONFIG_AGENT_TOOLS_REFERENCE",
                    f"-I{TOOLS_DIR}", f"-I{out}", "-o", str(exe), str(main_c),
                    str(out / "reference_pages.c"), str(TOOLS_DIR / "reference.c"),
                    str(TOOLS_DIR / "text_reader.c")], check=True)
    lines = subprocess.run([str(exe), *queries], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    return {q: lines[i].split() for i, q in enumerate(queries)}


#: A language and a task (the spec's {"query":"lua gfx drawing"} shape) -> the page first.
TASK_QUERIES = {
    "lua file read": "lua-files", "python file read": "python-files",
    "python append to a log file": "python-files", "lua list files": "lua-files",
    "python gpio": "python-gpio", "lua gpio": "lua-gpio", "lua pin level": "lua-gpio",
    "python sensors": "python-sensors", "lua sensors": "lua-sensors",
    "micropython read temperature": "python-sensors",
    "python board uptime": "python-device", "lua device api": "lua-device",
    "lua error handling": "lua-device", "python script": "python-device",
}
#: Without a language the tools' own pages stay first.
TOOL_QUERIES = {"How do I write a file?": "storage-tools", "read a file": "storage-tools",
                "list directory files": "storage-tools", "gpio": "gpio",
                "gpio read level": "gpio"}


def test_language_and_task_queries_find_the_skeleton_first(tmp_path: Path) -> None:
    ranked = rank_c(tmp_path, [*TASK_QUERIES, *TOOL_QUERIES])
    pages = {p.topic: p for p in GEN.load_pages(PAGES_DIR)}
    for query, topic in {**TASK_QUERIES, **TOOL_QUERIES}.items():
        assert ranked[query][:1] == [topic], (query, ranked[query])
    for topic in {*TASK_QUERIES.values()}:
        # The contract, which is what firmware_reference returns, ends in a copyable
        # skeleton with the language's error handling around the device calls.
        contract = pages[topic].contract
        assert "\nSkeleton:\n" in contract, topic
        skeleton = contract.split("\nSkeleton:\n", 1)[1]
        if topic.startswith("lua-"):
            assert "pcall(function()" in skeleton and "if not ok then" in skeleton, topic
        else:
            assert skeleton.startswith("import device\n"), topic
            assert "\ntry:\n" in skeleton and "\nexcept " in skeleton, topic
        assert "device." in skeleton, topic


# ---- Validation ------------------------------------------------------------------------------

def test_missing_field(tmp_path: Path) -> None:
    text = "---\ntopic: demo\nkeywords: [a]\nrequires: []\n---\nbody\n## Contract\nc\n"
    problem = one_problem(tmp_path, text)
    assert problem.endswith("p.md:5: front matter has no 'summary:' field"), problem


def test_each_missing_field_is_named(tmp_path: Path) -> None:
    text = "---\ntopic: demo\n---\nbody\n## Contract\nc\n"
    write_pages(tmp_path / "pages", {"p.md": text})
    problems = problems_of(tmp_path / "pages")
    assert [p.split(": ", 1)[1] for p in problems] == [
        f"front matter has no '{key}:' field" for key in ("summary", "keywords", "requires")]


def test_unknown_front_matter_key(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(extra_front="author: me\n"))
    assert problem.endswith("p.md:6: unknown front-matter key 'author' "
                            "(known: topic, summary, keywords, requires)"), problem


def test_field_given_twice(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(extra_front="topic: again\n"))
    assert problem.endswith("p.md:6: 'topic:' given twice (first on line 2)"), problem


def test_duplicate_topic(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {"a.md": page("same"), "b.md": page("same")})
    problems = problems_of(pages)
    assert len(problems) == 1
    assert problems[0] == f"{pages / 'b.md'}:2: duplicate topic 'same' (also in {pages / 'a.md'})"


def test_page_over_the_file_bound(tmp_path: Path) -> None:
    text = page(body="x" * GEN.PAGE_FILE_MAX)
    problem = one_problem(tmp_path, text)
    assert problem.endswith(f"p.md:1: page is {len(text)} bytes, more than "
                            f"{GEN.PAGE_FILE_MAX}"), problem


def test_body_over_its_bound(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(body="y" * (GEN.BODY_MAX + 1)))
    assert problem.endswith(f"p.md:7: body is {GEN.BODY_MAX + 1} bytes, more than "
                            f"{GEN.BODY_MAX}"), problem


def test_contract_over_its_bound(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(contract="z" * (GEN.CONTRACT_MAX + 1)))
    assert problem.endswith(f"p.md:13: contract is {GEN.CONTRACT_MAX + 1} bytes, more than "
                            f"{GEN.CONTRACT_MAX}"), problem


def test_placeholders_count_as_eleven_bytes_before_filling(tmp_path: Path) -> None:
    # 94 placeholders of 38 characters would be 3572 bytes, but count as 94 * 11 = 1034.
    contract = "{{CONFIG_AGENT_STORAGE_SEARCH_MATCHES}}" * 94
    problem = one_problem(tmp_path, page(contract=contract))
    assert "contract is 1034 bytes, more than 1024" in problem


def test_summary_over_its_bound(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(summary="s" * (GEN.SUMMARY_MAX + 1)))
    assert problem.endswith(f"p.md:3: summary is {GEN.SUMMARY_MAX + 1} bytes, more than "
                            f"{GEN.SUMMARY_MAX}"), problem


@pytest.mark.parametrize(("text", "expected"), [
    ("no front matter\n", "p.md:1: a page starts with a '---' line (front matter)"),
    ("---\ntopic: x\n", "p.md:2: front matter is not closed by a '---' line"),
    (page(body="b").replace("## Contract", "## Contracts"), "p.md:10: no '## Contract' section"),
    (page(contract="c\n## Contract\nd\n"), "p.md:14: a second '## Contract' heading"),
    (page(body="\n"), "p.md:7: the page has no body before its contract"),
    (page(contract="\n\n"), "p.md:12: the contract section is empty"),
    (page(topic="Bad_Topic"), ("p.md:2: topic 'Bad_Topic' must be 1 to 31 of a-z 0-9 '-', "
                              "starting with a letter")),
    (page(summary=""), "p.md:3: summary is empty"),
    (page(keywords="a b"), "p.md:4: keywords must be a list: [word, word, ...]"),
    (page(keywords="[]"), "p.md:4: keywords must list 1 to 16 words"),
    (page(keywords="[Up]"), "p.md:4: keyword 'Up' must be 1 to 31 of a-z 0-9 _ . + -"),
    (page(requires="CONFIG_A"), ("p.md:5: requires must be a list of Kconfig symbols: "
                                "[CONFIG_A, ...] or []")),
    (page(requires="[AGENT]"), "p.md:5: 'AGENT' is not a Kconfig symbol name (CONFIG_...)"),
    (page(requires="[CONFIG_A, CONFIG_A]"), "p.md:5: requires names a symbol twice"),
    (page(requires="[CONFIG_A,]"), ("p.md:5: requires must be a list of Kconfig symbols: "
                                   "[CONFIG_A, ...] or []")),
    (page(extra_front="just text\n"), "p.md:6: not a 'key: value' line: 'just text'"),
    (page(body="a\tb"), "p.md:7: tab character (indent with spaces)"),
    (page(body="a\r\nb"), "p.md:7: carriage return (use LF line ends)"),
    (page(body="a\x07b"), "p.md:7: control character U+0007"),
    (page(body="a\u2028b"), "p.md:7: line separator U+2028"),
    (page(body="{{lower}}"), ("p.md:7: placeholder {{lower}} must name a Kconfig symbol: "
                             "{{CONFIG_NAME}}")),
])
def test_refusals(tmp_path: Path, text: str, expected: str) -> None:
    problem = one_problem(tmp_path, text)
    assert problem.endswith(expected), problem


def test_invalid_utf8(tmp_path: Path) -> None:
    problem = one_problem(tmp_path, page(body="ok\nbad \xff here").encode("latin-1"))
    assert problem.endswith("p.md:8: not valid UTF-8"), problem


def test_problems_of_several_pages_are_all_reported(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {
        "a.md": page("a", summary=""),
        "b.md": page("b", extra_front="x: 1\n"),
        "c.md": page("c"),
    })
    problems = problems_of(pages)
    assert [Path(p.split(":", 1)[0]).name for p in problems] == ["a.md", "b.md"]


def test_cli_reports_and_writes_nothing(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {"a.md": page("a", summary="")})
    out_c = tmp_path / "out.c"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--pages", str(pages), "--dotconfig",
         str(sim_dotconfig(tmp_path)), "--out-c", str(out_c), "--out-h", str(tmp_path / "o.h")],
        capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr == f"gen_reference.py: {pages / 'a.md'}:3: summary is empty\n"
    assert not out_c.exists()


# ---- The .config and the filter ---------------------------------------------------------------

def test_requires_filter(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {
        "always.md": page("always"),
        "on.md": page("on", requires="[CONFIG_ON]"),
        "both.md": page("both", requires="[CONFIG_ON, CONFIG_OTHER]"),
        "off.md": page("off", requires="[CONFIG_OFF]"),
        "absent.md": page("absent", requires="[CONFIG_ABSENT]"),
        "module.md": page("module", requires="[CONFIG_MOD]"),
    })
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("# comment\n\nCONFIG_ON=y\nCONFIG_OTHER=y\n# CONFIG_OFF is not set\n"
                         "CONFIG_MOD=m\n")
    kept = GEN.select_pages(GEN.load_pages(pages), GEN.load_dotconfig(dotconfig))
    assert [p.topic for p in kept] == ["always", "both", "on"]


def test_requires_must_name_a_bool(tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "pages", {"a.md": page("a", requires="[CONFIG_N]")})
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("CONFIG_N=12\n")
    with pytest.raises(GEN.ReferenceError) as info:
        GEN.select_pages(GEN.load_pages(pages), GEN.load_dotconfig(dotconfig))
    assert info.value.problems == [
        f"{pages / 'a.md'}:5: CONFIG_N is not a bool symbol (its value is '12')"]


def test_placeholder_without_a_value(tmp_path: Path) -> None:
    body = "# a - b\n\nfirst\nsecond {{CONFIG_X}} and {{CONFIG_GONE}}\n"
    pages = write_pages(tmp_path / "pages", {"a.md": page("a", body=body)})
    dotconfig = tmp_path / ".config"
    dotconfig.write_text('CONFIG_X="s \\"q\\" \\\\"\n# CONFIG_GONE is not set\n')
    with pytest.raises(GEN.ReferenceError) as info:
        GEN.select_pages(GEN.load_pages(pages), GEN.load_dotconfig(dotconfig))
    assert info.value.problems == [
        (f"{pages / 'a.md'}:10: {{{{CONFIG_GONE}}}}: CONFIG_GONE has no value in this "
        "configuration")]
    dotconfig.write_text('CONFIG_X="s \\"q\\" \\\\"\nCONFIG_GONE=0x1f\n')
    kept = GEN.select_pages(GEN.load_pages(pages), GEN.load_dotconfig(dotconfig))
    assert 'second s "q" \\ and 0x1f' in kept[0].body


def test_bad_dotconfig_line(tmp_path: Path) -> None:
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("CONFIG_A=y\nnonsense\nCONFIG_S=\"open\n")
    with pytest.raises(GEN.ReferenceError) as info:
        GEN.load_dotconfig(dotconfig)
    assert info.value.problems == [f"{dotconfig}:2: not a .config line: 'nonsense'",
                                   f"{dotconfig}:3: unterminated string value of CONFIG_S"]


# ---- Determinism -----------------------------------------------------------------------------

def test_output_is_deterministic(tmp_path: Path) -> None:
    dotconfig = sim_dotconfig(tmp_path)
    first = GEN.generate(PAGES_DIR, dotconfig)
    assert GEN.generate(PAGES_DIR, dotconfig) == first
    # File names and the order they are found in do not matter: topics sort the table.
    renamed = write_pages(tmp_path / "renamed", {
        f"{99 - i:02d}-{p.name}": p.read_text(encoding="utf-8")
        for i, p in enumerate(sorted(PAGES_DIR.glob("*.md")))})
    assert GEN.generate(renamed, dotconfig) == first
