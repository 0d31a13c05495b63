"""`python -m baton` runs the command line."""

from baton.cli import main

raise SystemExit(main())
