"""Test support shared by the simulator tests in CI and the Twister suites (twister_tests/)."""
