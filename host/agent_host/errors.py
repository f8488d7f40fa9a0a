"""The package's exception tree: one base, one class per kind of failure."""


class AgentHostError(Exception):
    """Base of every error this package raises on purpose."""


class BuildError(AgentHostError):
    """The simulator could not be configured or built."""


class DeviceError(AgentHostError):
    """The device (or the simulator) did not answer as expected."""


class TestServerError(AgentHostError):
    """The OpenAI test server could not start, was misused, or saw a request it did not expect."""

    __test__ = False  # not a pytest test class despite the name


class RequestInvalidError(AgentHostError):
    """A recorded request body does not match the openai SDK's request types."""
