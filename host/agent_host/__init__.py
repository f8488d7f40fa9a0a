"""Host side of the Zephyr LLM agent: simulator launcher, provisioning and test fixtures."""

__version__ = "0.1.0"
