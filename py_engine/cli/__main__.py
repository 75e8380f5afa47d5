"""`python -m py_engine.cli` runs the command line."""

import sys

from py_engine.cli import main

sys.exit(main())
