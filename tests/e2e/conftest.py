"""The e2e tests' shared check module gets pytest's assertion messages too."""

import pytest

pytest.register_assert_rewrite("tool_checks")
