"""Requests and responses of the agent management group (SMP group 64, docs/mgmt-group.md).

Each request is an `smp` message class with its `_Response`, `_ErrorV1` and `_ErrorV2`, the
way smpclient defines the standard groups (`smpclient.requests.*`), so it also works with
`SMPClient.request()`. Response fields are checked strictly: a field the contract does not
name, a missing field or a value of the wrong CBOR type makes the answer invalid.
"""

from __future__ import annotations

from enum import IntEnum, unique
from typing import Annotated, Any, Literal

import cbor2
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictBytes,
    StrictInt,
    StrictStr,
    ValidationError,
)
from smp import error as smperror
from smp import header as smphdr
from smp import message as smpmsg
from typing_extensions import Self

GROUP_ID = 64
"""MGMT_GROUP_ID_PERUSER: the first user group."""

UInt = Annotated[StrictInt, Field(ge=0)]
KeyState = Literal["set", "not set"]

CONFIG_NAMES = ("endpoint", "model", "key", "reasoning", "tools", "max-tools", "user",
                "embeddings", "embeddings-model")
"""The `config` names, as the device's shell spells them."""


@unique
class Command(IntEnum):
    CONFIG = 0
    STATUS = 1
    FORGET = 2
    CONVERSATIONS = 3
    EXPORT = 4
    DELETE = 5
    TOOLS = 6
    MAN = 7
    IMPORT = 8
    PART = 9
    MODULES = 10
    REMOVE = 11
    TOOL_STATUS = 12
    FEED = 13
    RESULT = 14


@unique
class AgentRc(IntEnum):
    """The group's error codes (`err.rc` of an SMP version 2 error)."""

    OK = 0
    EUNKNOWN = 1
    EINVAL = 2
    EWRITEONLY = 3
    ENOENT = 4
    ERANGE = 5
    EBUSY = 6
    EIO = 7
    ENODEV = 8
    ENOSPC = 9
    EPERM = 10


class AgentErrorV1(smperror.ErrorV1):
    """MCUmgr's own transport-level error (`{"rc": N}`), e.g. a request it could not decode."""

    _GROUP_ID = GROUP_ID


class AgentErrorV2(smperror.ErrorV2[AgentRc]):
    """The group's error: `{"err": {"group": 64, "rc": RC}, "reason": "..."}`."""

    _GROUP_ID = GROUP_ID

    reason: StrictStr | None = None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class _Group:
    _ErrorV1 = AgentErrorV1
    _ErrorV2 = AgentErrorV2


# -- config ----------------------------------------------------------------------------------
class ConfigAllResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG

    endpoint: StrictStr
    model: StrictStr
    key: KeyState
    reasoning: StrictStr
    tools: StrictStr
    max_tools: UInt = Field(alias="max-tools")
    user: StrictStr
    #: The memory tools' embedding pass (docs/memory.md); absent from older firmware.
    embeddings: StrictStr = ""
    embeddings_model: StrictStr = Field(default="", alias="embeddings-model")
    protocol: StrictStr


class ConfigValueResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG

    name: StrictStr
    value: StrictStr


class ConfigWriteResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG

    name: StrictStr
    value: StrictStr


class ConfigReadAll(smpmsg.ReadRequest, _Group):
    """`config R {}`: every setting (the key as "set" or "not set")."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG
    _Response = ConfigAllResponse


class ConfigRead(smpmsg.ReadRequest, _Group):
    """`config R {name}`: one setting."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG
    _Response = ConfigValueResponse

    name: str


class ConfigWrite(smpmsg.WriteRequest, _Group):
    """`config W {name, value}` or `{name, clear: true}` (clear only for the key).

    The key's value never appears in the request's repr or str (smpclient logs requests).
    """

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONFIG
    _Response = ConfigWriteResponse

    name: str
    value: str | None = None
    clear: bool | None = None

    def __repr_args__(self) -> Any:
        for field, value in super().__repr_args__():
            if self.name == "key" and field in ("value", "smp_data") and value is not None:
                yield field, "<hidden>"
            else:
                yield field, value


# -- status ----------------------------------------------------------------------------------
class ToolCalls(_Model):
    executed: UInt
    denied: UInt
    failed: UInt
    last_used: UInt
    last_budget: UInt


class Pool(_Model):
    name: StrictStr
    pool_class: StrictStr = Field(alias="class")
    block: UInt
    total: UInt
    free: UInt
    lowest: UInt
    #: bytes lent at once at most, and bytes really written (docs/mgmt-group.md, status)
    held_peak: UInt
    written_peak: UInt
    written_block: UInt


class StatusResponse(smpmsg.ReadResponse):
    """The status map. Its `version` (the agent's) is the field `agent_version` here: smp's
    message base class has a field `version` of its own, the SMP protocol version."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.STATUS

    agent_version: StrictStr
    board: StrictStr
    protocol: StrictStr
    endpoint: StrictStr
    model: StrictStr
    key: KeyState
    reasoning: StrictStr
    tools: StrictStr
    max_tools: UInt = Field(alias="max-tools")
    user: StrictStr
    #: The memory tools' embedding pass (docs/memory.md); absent from older firmware.
    embeddings: StrictStr = ""
    embeddings_model: StrictStr = Field(default="", alias="embeddings-model")
    tool_calls: ToolCalls
    pools: list[Pool]

    @classmethod
    def loads(cls, data: bytes) -> Self:
        body = cbor2.loads(data[smphdr.Header.SIZE:])
        if not isinstance(body, dict) or "agent_version" in body:
            raise ValueError("not a status map")
        if "version" in body:
            body["agent_version"] = body.pop("version")
        return cls(header=smphdr.Header.loads(data[: smphdr.Header.SIZE]), **body,
                   smp_data=data)


class StatusRead(smpmsg.ReadRequest, _Group):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.STATUS
    _Response = StatusResponse


# -- forget ----------------------------------------------------------------------------------
class ForgetResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.FORGET


class ForgetWrite(smpmsg.WriteRequest, _Group):
    """`forget W {}`: erase every setting below agent/, the key included."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.FORGET
    _Response = ForgetResponse


# -- conversations ---------------------------------------------------------------------------
class Conversation(_Model):
    slot: UInt
    turns: UInt
    bytes: UInt
    model: StrictStr
    title: StrictStr
    damaged: StrictBool


class BadEntry(_Model):
    """An entry of the conversation list that is not a Conversation (a field missing or of
    the wrong type): its slot when that much could be read, and what is wrong with it."""

    slot: int | None
    problem: str


def _has_surrogates(value: Any) -> bool:
    """Whether a decoded CBOR value holds text that was not UTF-8 (surrogateescape)."""
    if isinstance(value, str):
        return any("\udc80" <= c <= "\udcff" for c in value)
    if isinstance(value, dict):
        return any(_has_surrogates(k) or _has_surrogates(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogates(v) for v in value)
    return False


def _repaired(text: str) -> str:
    """@text (decoded with surrogateescape) with each ill-formed sequence as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _read_entry(raw: Any) -> tuple[Conversation | None, BadEntry | None, list[str]]:
    """One list entry: the conversation (its text repaired), or why it is unreadable; and the
    names of the fields whose text was not UTF-8."""
    slot = raw.get("slot") if isinstance(raw, dict) else None
    slot = slot if isinstance(slot, int) and not isinstance(slot, bool) else None
    if not isinstance(raw, dict) or _has_surrogates(list(raw)):
        return None, BadEntry(slot=slot, problem="not a map of the contract's fields"), []
    fixed = {k: _repaired(v) if isinstance(v, str) else v for k, v in raw.items()}
    bad_text = sorted(k for k, v in raw.items() if _has_surrogates(v))
    try:
        return Conversation.model_validate(fixed), None, bad_text
    except (ValidationError, TypeError) as err:
        if not isinstance(err, ValidationError):
            return None, BadEntry(slot=slot, problem="not a map of the contract's fields"), []
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        return None, BadEntry(slot=slot, problem=f"{where}: {first['msg']}"), []


class ConversationsResponse(smpmsg.ReadResponse):
    """The stored conversations of slots `off + 1` .. `next`.

    One bad entry costs only itself: text that is not UTF-8 (an older device stored a title
    typed on a Latin-1 terminal as it came) is shown with U+FFFD and named in `repaired`; an
    entry with a field missing or of the wrong type is left out of `entries` and kept in
    `unreadable`. Everything outside the list is checked strictly.
    """

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONVERSATIONS

    dir: StrictStr
    slots: UInt
    off: UInt
    next: UInt
    entries: list[Conversation] = Field(alias="list")
    repaired: tuple[tuple[int, tuple[str, ...]], ...] = ()
    """(slot, field names) of the entries whose text was not UTF-8."""
    unreadable: tuple[BadEntry, ...] = ()

    @classmethod
    def loads(cls, data: bytes) -> Self:
        body = cbor2.loads(data[smphdr.Header.SIZE:], str_errors="surrogateescape")
        if not isinstance(body, dict) or "repaired" in body or "unreadable" in body:
            raise ValueError("not a conversation list")
        raw = body.get("list")
        if isinstance(raw, list):
            entries: list[Conversation] = []
            repaired: list[tuple[int, tuple[str, ...]]] = []
            unreadable: list[BadEntry] = []
            for item in raw:
                entry, bad, bad_text = _read_entry(item)
                if entry is not None:
                    entries.append(entry)
                    if bad_text:
                        repaired.append((entry.slot, tuple(bad_text)))
                if bad is not None:
                    unreadable.append(bad)
            body["list"] = entries
            body["repaired"] = tuple(repaired)
            body["unreadable"] = tuple(unreadable)
        if _has_surrogates(body):
            raise ValueError("text outside the list is not UTF-8")
        return cls(header=smphdr.Header.loads(data[: smphdr.Header.SIZE]), **body,
                   smp_data=data)


class ConversationsRead(smpmsg.ReadRequest, _Group):
    """`conversations R {off?}`: the list from slot `off + 1`; ask again from `next`."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.CONVERSATIONS
    _Response = ConversationsResponse

    off: int | None = None


# -- export ----------------------------------------------------------------------------------
class ExportResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.EXPORT

    slot: UInt
    off: UInt
    length: UInt = Field(alias="len")
    data: StrictBytes


class ExportRead(smpmsg.ReadRequest, _Group):
    """`export R {slot, off}`: the conversation file's bytes from `off`."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.EXPORT
    _Response = ExportResponse

    slot: int
    off: int


# -- delete ----------------------------------------------------------------------------------
class DeleteResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.DELETE

    slot: UInt


class DeleteWrite(smpmsg.WriteRequest, _Group):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.DELETE
    _Response = DeleteResponse

    slot: int


# -- tools -----------------------------------------------------------------------------------
class Tool(_Model):
    name: StrictStr
    domain: StrictStr
    risk: StrictStr
    available: Literal["bootstrap", "yes", "no"]
    policy: Literal["runs", "asks", "denied"]
    needs: StrictStr
    reason: StrictStr


class ToolsResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOLS

    policy: StrictStr
    total: UInt
    off: UInt
    tools: list[Tool]


class ToolsRead(smpmsg.ReadRequest, _Group):
    """`tools R {off?}`: the tool table from index `off`."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOLS
    _Response = ToolsResponse

    off: int | None = None


# -- tool status -----------------------------------------------------------------------------
class ToolStatusResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOL_STATUS

    gen: UInt
    size: UInt
    off: UInt
    data: StrictBytes


class ToolStatusRead(smpmsg.ReadRequest, _Group):
    """`tool-status R {off?, agent?, refresh?}`: the tool status stream (tools.jsonl) from
    `off`; with `agent` and `refresh` the device first appends that agent's current state."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOL_STATUS
    _Response = ToolStatusResponse

    off: int | None = None
    agent: int | None = None
    refresh: bool | None = None


class ToolSelectResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOL_STATUS

    mask: UInt
    agent: UInt | None = None
    record: UInt | None = None


class ToolSelectWrite(smpmsg.WriteRequest, _Group):
    """`tool-status W {group, value, agent?}`: the console's `tool GROUP on|off` or
    `agent ID tools GROUP on|off|inherit` (group "all": every group)."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.TOOL_STATUS
    _Response = ToolSelectResponse

    group: str
    value: str
    agent: int | None = None


# -- man -------------------------------------------------------------------------------------
class ManResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.MAN

    topic: StrictStr
    sha256: StrictStr


class ManWrite(smpmsg.WriteRequest, _Group):
    """`man W {topic, sha256?}`: record the SHA-256 of the page installed on the SD card for
    TOPIC (64 lower-case hex digits), or without sha256 forget it."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.MAN
    _Response = ManResponse

    topic: str
    sha256: str | None = None


# -- modules: import, part, modules, remove ---------------------------------------------------
ModuleKind = Literal["role", "skill", "tool"]
MODULE_KINDS: tuple[ModuleKind, ...] = ("role", "skill", "tool")


class ImportResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.IMPORT

    name: StrictStr
    off: UInt
    state: Literal["incomplete"]


class ImportWrite(smpmsg.WriteRequest, _Group):
    """`import W {name, kind, manifest_len, body_len, sha256}`: announce a module's text (the
    manifest's bytes then the body's; sha256 is their SHA-256 in 64 lower-case hex digits).
    The answer's `off` is 0, or the bytes an identical incomplete arrival already holds."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.IMPORT
    _Response = ImportResponse

    name: str
    kind: str
    manifest_len: int
    body_len: int
    sha256: str


class PartResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.PART

    name: StrictStr
    off: UInt
    state: Literal["incomplete", "installed", "replaced", "unchanged"]
    persisted: StrictBool | None = None


class PartWrite(smpmsg.WriteRequest, _Group):
    """`part W {name, off, data}`: bytes of the announced text at offset `off`; the answer's
    `off` is where the next part starts. The last part is validated and installed (state
    installed, replaced or unchanged) or refused with the group error and its reason."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.PART
    _Response = PartResponse

    name: str
    off: int
    data: bytes


class Module(_Model):
    name: StrictStr
    kind: ModuleKind
    size: UInt
    received: UInt
    sha256: StrictStr
    state: Literal["installed", "incomplete"]


class ModulesResponse(smpmsg.ReadResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.MODULES

    slots: UInt
    off: UInt
    entries: list[Module] = Field(alias="list")
    next: UInt


class ModulesRead(smpmsg.ReadRequest, _Group):
    """`modules R {off?}`: the catalog's entries from index `off`; ask again from `next`
    until `next` is `slots`."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.MODULES
    _Response = ModulesResponse

    off: int | None = None


class RemoveResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.REMOVE

    name: StrictStr


class RemoveWrite(smpmsg.WriteRequest, _Group):
    """`remove W {name}`: remove an installed module (journaled)."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.REMOVE
    _Response = RemoveResponse

    name: str


# -- the host feeder ---------------------------------------------------------------------------
class FeedResponse(smpmsg.ReadResponse):
    """`{}` (no call), or a host tool call: the tool (module) name, its entry file, the
    entry's SHA-256 recorded at import, the declared arguments in order as text, the output
    bound and the milliseconds the device still waits for the answer."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.FEED

    id: UInt | None = None
    tool: StrictStr | None = None
    entry: StrictStr | None = None
    sha256: StrictStr | None = None
    args: list[StrictStr] | None = None
    output_max: UInt | None = None
    timeout_ms: UInt | None = None


class FeedRead(smpmsg.ReadRequest, _Group):
    """`feed R {}`: the feeder's long-poll; the device holds it up to
    CONFIG_AGENT_HOST_FEED_WAIT_MS while no call waits."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.FEED
    _Response = FeedResponse


class ResultResponse(smpmsg.WriteResponse):
    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.RESULT

    id: UInt


class ResultWrite(smpmsg.WriteRequest, _Group):
    """`result W {id, exit, output, truncated}`: the program's exit status (negative: the
    signal that ended it) and its output, at most the call's output_max bytes. A call that no
    longer waits (timed out, cancelled, unknown) is refused with ENOENT."""

    _GROUP_ID = GROUP_ID
    _COMMAND_ID = Command.RESULT
    _Response = ResultResponse

    id: int
    exit: int
    output: bytes
    truncated: bool
