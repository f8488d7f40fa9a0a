"""The package's exception tree: one base, one class per kind of failure."""


class AgentHostError(Exception):
    """Base of every error this package raises on purpose."""


class BuildError(AgentHostError):
    """The simulator could not be configured or built."""


class DeviceError(AgentHostError):
    """The device (or the simulator) did not answer as expected."""
