"""`python -m agent_host.testserver`: serve fixtures or a script by hand."""

import sys

from .command import main

sys.exit(main())
