"""Test support shared by the simulator tests in CI and, later, the Twister suites."""
