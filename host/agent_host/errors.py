"""The package's exception tree: one base, one class per kind of failure."""


class AgentHostError(Exception):
    """Base of every error this package raises on purpose.

    `exit_code` is the command line's exit status for the class (docs/host-cli.md).
    """

    exit_code = 1


class BuildError(AgentHostError):
    """The simulator could not be configured or built."""


class DeviceError(AgentHostError):
    """The device (or the simulator) did not answer as expected."""


class TestServerError(AgentHostError):
    """The OpenAI test server could not start, was misused, or saw a request it did not expect."""

    __test__ = False  # not a pytest test class despite the name


class RequestInvalidError(AgentHostError):
    """A recorded request body does not match the openai SDK's request types."""


class UsageError(AgentHostError):
    """A command was given wrong arguments or missing input (exit status 2)."""

    exit_code = 2


class DeviceRefusedError(AgentHostError):
    """The device answered a management command with an error: its code and reason (exit 1)."""

    exit_code = 1

    def __init__(self, command: str, rc: int, rc_name: str, reason: str) -> None:
        self.command = command
        self.rc = rc
        self.rc_name = rc_name
        self.reason = reason
        super().__init__(f"{command}: {reason} ({rc_name})" if reason else f"{command}: {rc_name}")


class ExportError(AgentHostError):
    """An exported conversation file is damaged or changed while it was read (exit 1)."""

    exit_code = 1


class TransportError(AgentHostError):
    """The device could not be reached, the connection was lost, or an answer was not one the
    management group defines (exit status 3)."""

    exit_code = 3


class DeviceTimeoutError(AgentHostError):
    """The device did not answer a management request in time (exit status 4)."""

    exit_code = 4
