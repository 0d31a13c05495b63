"""`python -m baton` runs the command line."""

from baton.cli.main import main

raise SystemExit(main())
