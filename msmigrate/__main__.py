"""`python -m msmigrate ...`: the same as the `msmigrate` command."""
import sys

from .cli import main

sys.exit(main())
